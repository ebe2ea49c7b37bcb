import { describe, expect, it } from 'vitest';
import {
  audioIn,
  audioOut,
  closed,
  connected,
  connectionState,
  created,
  fourTracks,
  iceRestart,
  mediaError,
  opening,
  PC_A,
  PC_B,
  pairChange,
  sample,
  samples,
  T0,
  trackEvent,
  videoIn,
  videoOut,
} from '../scripts/timeline.ts';
import { createDetector, detect } from './detector.ts';
import type { DetectorKind } from './kinds.ts';
import type { DetectorItem, Finding } from './types.ts';

const ofKind = (findings: readonly Finding[], kind: DetectorKind) =>
  findings.filter((finding) => finding.kind === kind);
const kinds = (findings: readonly Finding[]) => findings.map((finding) => finding.kind);

/** A connected call on PC_A: the opening events, then `items`. */
const call = (...items: DetectorItem[][]): DetectorItem[] => [...opening(T0 - 1000, PC_A), ...items.flat()];

describe('webrtc_connect_failure', () => {
  it('times out at pc_created + connectTimeoutMs once a later item of any pc shows the time passed', () => {
    const findings = detect([created(T0, PC_A), ...opening(T0 + 1000, PC_B), iceRestart(T0 + 16_000, PC_B)]);
    expect(findings).toEqual([
      expect.objectContaining({
        kind: 'webrtc_connect_failure',
        t: T0 + 15_000,
        pc: PC_A,
        severity: 'critical',
      }),
    ]);
    expect(findings[0]?.evidence).toEqual({ reason: 'timeout', everConnected: false, timeoutMs: 15_000 });
  });

  it('does not time out before time is known to have passed the deadline', () => {
    expect(detect([created(T0, PC_A)])).toEqual([]);
    expect(detect([created(T0, PC_A)], { now: T0 + 14_999 })).toEqual([]);
    expect(ofKind(detect([created(T0, PC_A)], { now: T0 + 15_000 }), 'webrtc_connect_failure')).toHaveLength(
      1,
    );
  });

  it('connected exactly at the deadline is in time; one millisecond later is not', () => {
    expect(detect([created(T0, PC_A), connected(T0 + 15_000, PC_A)], { now: T0 + 60_000 })).toEqual([]);
    const late = detect([created(T0, PC_A), connected(T0 + 15_001, PC_A)]);
    expect(late).toEqual([expect.objectContaining({ kind: 'webrtc_connect_failure', t: T0 + 15_000 })]);
  });

  it('a sample reporting conn.state connected counts as connected', () => {
    const items = [created(T0, PC_A), sample(T0 + 5000, PC_A, 5000, fourTracks())];
    expect(detect(items, { now: T0 + 60_000 })).toEqual([]);
  });

  it('fires at once when the connection fails, with everConnected', () => {
    const never = detect([created(T0, PC_A), connectionState(T0 + 3000, PC_A, 'failed', 'connecting')]);
    expect(never).toEqual([expect.objectContaining({ kind: 'webrtc_connect_failure', t: T0 + 3000 })]);
    expect(never[0]?.evidence).toEqual({ reason: 'failed', everConnected: false });
    const after = detect([
      ...opening(T0, PC_A),
      connectionState(T0 + 40_000, PC_A, 'failed', 'disconnected'),
      connectionState(T0 + 50_000, PC_A, 'failed', 'connecting'),
    ]);
    expect(after).toHaveLength(1);
    expect(after[0]).toMatchObject({ t: T0 + 40_000, evidence: { reason: 'failed', everConnected: true } });
  });

  it('a failed conn.state in a sample fires too', () => {
    const findings = detect([created(T0, PC_A), sample(T0 + 5000, PC_A, 5000, [], { state: 'failed' })]);
    expect(findings).toEqual([expect.objectContaining({ kind: 'webrtc_connect_failure', t: T0 + 5000 })]);
  });

  it('a connection closed before its deadline, or not tracked, never times out', () => {
    expect(detect([created(T0, PC_A), closed(T0 + 4000, PC_A, 4000)], { now: T0 + 60_000 })).toEqual([]);
    expect(detect([created(T0, PC_A, false)], { now: T0 + 60_000 })).toEqual([]);
  });

  it('push returns the timeout when a later item arrives, advance when time passes', () => {
    const detector = createDetector();
    expect(detector.push(created(T0, PC_A))).toEqual([]);
    expect(detector.push(created(T0 + 20_000, PC_B))).toEqual([
      expect.objectContaining({ kind: 'webrtc_connect_failure', pc: PC_A, t: T0 + 15_000 }),
    ]);
    expect(detector.advance(T0 + 34_999)).toEqual([]);
    expect(detector.advance(T0 + 35_000)).toEqual([
      expect.objectContaining({ kind: 'webrtc_connect_failure', pc: PC_B, t: T0 + 35_000 }),
    ]);
    expect(detector.findings()).toHaveLength(2);
  });
});

describe('webrtc_one_way_media', () => {
  const inboundStalled = fourTracks({ audioIn: { stalled: true }, videoIn: { stalled: true } });

  it('fires when every live inbound track is stalled for oneWayMs while outbound moves', () => {
    const findings = detect(call(samples(PC_A, T0, 1000, 8, () => inboundStalled)));
    expect(findings).toEqual([
      {
        kind: 'webrtc_one_way_media',
        severity: 'critical',
        t: T0 + 6000,
        pc: PC_A,
        evidence: { direction: 'in', stalledTracks: 2, sustainedMs: 6000, threshold: 6000 },
      },
    ]);
  });

  it('1 s and 5 s windows of the same condition give the same t', () => {
    const oneSecond = detect(call(samples(PC_A, T0, 1000, 10, () => inboundStalled)));
    const fiveSeconds = detect(call(samples(PC_A, T0, 5000, 2, () => inboundStalled)));
    expect(oneSecond.map((finding) => finding.t)).toEqual([T0 + 6000]);
    expect(fiveSeconds.map((finding) => finding.t)).toEqual([T0 + 6000]);
  });

  it('names the track when a single outbound track is stalled (an audio-only call)', () => {
    const tracks = [audioIn({ stalled: false }), audioOut({ stalled: true })];
    const findings = detect(call(samples(PC_A, T0, 1000, 6, () => tracks)));
    expect(findings).toEqual([
      expect.objectContaining({
        t: T0 + 6000,
        track: 'trk_audio_out',
        evidence: expect.objectContaining({ direction: 'out' }),
      }),
    ]);
  });

  it('a short stall (one spike) is not one-way media', () => {
    const findings = detect(
      call(samples(PC_A, T0, 1000, 20, (index) => (index % 5 === 0 ? inboundStalled : fourTracks()))),
    );
    expect(findings).toEqual([]);
  });

  it('a muted or ended track is not one-way media', () => {
    const mutedVideo = fourTracks({ videoIn: { stalled: true } });
    const muted = detect(
      call(
        [trackEvent(T0, PC_A, 'track_muted', videoIn())],
        samples(PC_A, T0, 1000, 10, () => mutedVideo),
      ),
    );
    expect(muted).toEqual([]);
    // Both inbound tracks muted (the remote muted everything): no live inbound track at all.
    const allMuted = detect(
      call(
        [trackEvent(T0, PC_A, 'track_muted', videoIn()), trackEvent(T0, PC_A, 'track_ended', audioIn())],
        samples(PC_A, T0, 1000, 10, () => inboundStalled),
      ),
    );
    expect(allMuted).toEqual([]);
    // Unmuted again: the stall counts from the unmute on.
    const unmuted = detect(
      call(
        [trackEvent(T0, PC_A, 'track_muted', videoIn()), trackEvent(T0, PC_A, 'track_muted', audioIn())],
        [
          trackEvent(T0 + 3000, PC_A, 'track_unmuted', videoIn()),
          trackEvent(T0 + 3000, PC_A, 'track_unmuted', audioIn()),
        ],
        samples(PC_A, T0, 1000, 12, () => inboundStalled),
      ),
    );
    expect(unmuted.map((finding) => finding.t)).toEqual([T0 + 3000 + 6000]);
  });

  it('an audio-only call, or one side sending no video, is not one-way media', () => {
    const audioOnly = [audioIn({ stalled: false }), audioOut({ stalled: false })];
    expect(detect(call(samples(PC_A, T0, 1000, 20, () => audioOnly)))).toEqual([]);
    // We send audio and video; the other side sends audio only: no inbound video track at all.
    const noInboundVideo = [
      audioIn({ stalled: false }),
      audioOut({ stalled: false }),
      videoOut({ stalled: false }),
    ];
    expect(detect(call(samples(PC_A, T0, 1000, 20, () => noInboundVideo)))).toEqual([]);
    // A receive-only peer connection (no outbound track) whose inbound tracks stall: one direction only.
    const receiveOnly = [audioIn({ stalled: true }), videoIn({ stalled: true })];
    expect(detect(call(samples(PC_A, T0, 1000, 20, () => receiveOnly)))).toEqual([]);
  });

  it('a live track with stalled missing is not evidence', () => {
    const unknown = [audioIn({ stalled: true }), videoIn({ lossPct: 0 }), audioOut({ stalled: false })];
    expect(detect(call(samples(PC_A, T0, 1000, 20, () => unknown)))).toEqual([]);
  });

  it('a gap between windows breaks the run', () => {
    const first = samples(PC_A, T0, 1000, 4, () => inboundStalled);
    const second = samples(PC_A, T0 + 5500, 1000, 4, () => inboundStalled); // starts 1.5 s after the 4 s mark
    expect(detect(call(first, second))).toEqual([]);
    const third = samples(PC_A, T0 + 4900, 1000, 2, () => inboundStalled); // within 1 s: contiguous
    expect(detect(call(first, third)).map((finding) => finding.t)).toEqual([T0 + 6000]);
  });
});

describe('webrtc_media_permission_denied and webrtc_device_unavailable', () => {
  it('fires on NotAllowedError, once per session without a pc', () => {
    const findings = detect([
      mediaError(T0, 'NotAllowedError', 'video'),
      mediaError(T0 + 1000, 'NotAllowedError', 'audio'),
    ]);
    expect(findings).toEqual([
      {
        kind: 'webrtc_media_permission_denied',
        severity: 'high',
        t: T0,
        evidence: { errorName: 'NotAllowedError', mediaKind: 'video' },
      },
    ]);
  });

  it('fires on NotReadableError and NotFoundError, once per pc or per session', () => {
    const findings = detect([
      mediaError(T0, 'NotFoundError'),
      mediaError(T0 + 10, 'NotReadableError', 'audio'),
      mediaError(T0 + 20, 'NotReadableError', 'audio', PC_A),
    ]);
    expect(findings).toEqual([
      {
        kind: 'webrtc_device_unavailable',
        severity: 'high',
        t: T0,
        evidence: { errorName: 'NotFoundError' },
      },
      {
        kind: 'webrtc_device_unavailable',
        severity: 'high',
        t: T0 + 20,
        pc: PC_A,
        evidence: { errorName: 'NotReadableError', mediaKind: 'audio' },
      },
    ]);
  });

  it('other capture errors fire nothing', () => {
    expect(
      detect([
        mediaError(T0, 'OverconstrainedError'),
        mediaError(T0, 'AbortError'),
        mediaError(T0, 'TypeError'),
      ]),
    ).toEqual([]);
  });
});

describe('webrtc_freeze', () => {
  it('one freeze over freezeSingleMs fires at the sample that reports it', () => {
    const findings = detect(
      call(
        samples(PC_A, T0, 5000, 3, (index) =>
          fourTracks(index === 1 ? { videoIn: { freezes: 1, freezeMs: 2500, maxFreezeMs: 2500 } } : {}),
        ),
      ),
    );
    expect(findings).toEqual([
      {
        kind: 'webrtc_freeze',
        severity: 'high',
        t: T0 + 10_000,
        pc: PC_A,
        track: 'trk_video_in',
        evidence: { reason: 'single', source: 'maxFreezeMs', freezeMs: 2500, threshold: 2000 },
      },
    ]);
  });

  it('exactly freezeSingleMs is not over it', () => {
    const tracks = fourTracks({ videoIn: { freezes: 1, freezeMs: 2000, maxFreezeMs: 2000 } });
    expect(detect(call([sample(T0 + 5000, PC_A, 5000, tracks)]))).toEqual([]);
  });

  it('freezeMs / freezes stands in for maxFreezeMs when it is missing', () => {
    const tracks = [videoIn({ freezes: 2, freezeMs: 4400 })];
    const findings = detect(call([sample(T0 + 5000, PC_A, 5000, tracks)]));
    expect(findings[0]?.evidence).toEqual({
      reason: 'single',
      source: 'average',
      freezeMs: 2200,
      threshold: 2000,
    });
  });

  it("an inbound video unmute's freezeMs counts; audio or outbound do not", () => {
    const findings = detect(
      call([
        trackEvent(T0, PC_A, 'track_unmuted', audioIn(), 9000),
        trackEvent(T0 + 1, PC_A, 'track_unmuted', videoOut(), 9000),
        trackEvent(T0 + 2, PC_A, 'track_unmuted', videoIn(), 3000),
      ]),
    );
    expect(findings).toEqual([
      expect.objectContaining({
        t: T0 + 2,
        track: 'trk_video_in',
        evidence: { reason: 'single', source: 'unmute', freezeMs: 3000, threshold: 2000 },
      }),
    ]);
  });

  it('outbound video never freezes', () => {
    const tracks = [videoOut({ freezes: 1, freezeMs: 4000, maxFreezeMs: 4000 })];
    expect(detect(call([sample(T0 + 5000, PC_A, 5000, tracks)]))).toEqual([]);
  });

  const shortFreezes = (count: number) =>
    samples(PC_A, T0, 1000, count, () =>
      fourTracks({ videoIn: { freezes: 1, freezeMs: 100, maxFreezeMs: 100 } }),
    );

  it('frozen share over freezeRatioPct is judged at pc_closed once minObservedMs is observed', () => {
    const findings = detect(call(shortFreezes(30), [closed(T0 + 30_000, PC_A, 31_000)]));
    expect(findings).toEqual([
      {
        kind: 'webrtc_freeze',
        severity: 'high',
        t: T0 + 30_000,
        pc: PC_A,
        track: 'trk_video_in',
        evidence: { reason: 'ratio', ratioPct: 10, freezeMs: 3000, observedMs: 30_000, threshold: 5 },
      },
    ]);
  });

  it('or at advance, at its time; never before minObservedMs is observed', () => {
    expect(detect(call(shortFreezes(30)), { now: T0 + 40_000 })).toEqual([
      expect.objectContaining({ kind: 'webrtc_freeze', t: T0 + 40_000 }),
    ]);
    expect(detect(call(shortFreezes(29), [closed(T0 + 29_000, PC_A, 30_000)]), { now: T0 + 60_000 })).toEqual(
      [],
    );
  });

  it('a frozen share of exactly freezeRatioPct does not fire', () => {
    const fivePercent = samples(PC_A, T0, 1000, 40, () =>
      fourTracks({ videoIn: { freezes: 1, freezeMs: 50 } }),
    );
    expect(detect(call(fivePercent, [closed(T0 + 40_000, PC_A, 41_000)]))).toEqual([]);
  });

  it('a ratio judged true at an advance stays fired', () => {
    const detector = createDetector();
    for (const item of call(shortFreezes(30))) detector.push(item);
    expect(kinds(detector.advance(T0 + 30_000))).toEqual(['webrtc_freeze']);
    for (const item of samples(PC_A, T0 + 30_000, 1000, 60, () => fourTracks())) detector.push(item);
    detector.push(closed(T0 + 90_000, PC_A, 91_000));
    expect(detector.advance(T0 + 90_000)).toEqual([]);
    expect(kinds(detector.findings())).toEqual(['webrtc_freeze']);
  });
});

describe('webrtc_audio_dropout', () => {
  const concealing = (concealmentPct: number) => fourTracks({ audioIn: { concealmentPct } });

  it('fires at runStart + concealmentSustainMs, for 1 s and 5 s windows alike', () => {
    for (const windowMs of [1000, 5000]) {
      const findings = detect(call(samples(PC_A, T0, windowMs, 20_000 / windowMs, () => concealing(8))));
      expect(findings).toEqual([
        {
          kind: 'webrtc_audio_dropout',
          severity: 'high',
          t: T0 + 10_000,
          pc: PC_A,
          track: 'trk_audio_in',
          evidence: { concealmentPct: 8, sustainedMs: 10_000, threshold: 5 },
        },
      ]);
    }
  });

  it('9 s of concealment is not sustained, nor is concealment of exactly concealmentPct', () => {
    const nine = samples(PC_A, T0, 1000, 9, () => concealing(30));
    const after = samples(PC_A, T0 + 9000, 1000, 20, () => concealing(1));
    expect(detect(call(nine, after))).toEqual([]);
    expect(detect(call(samples(PC_A, T0, 1000, 30, () => concealing(5))))).toEqual([]);
  });

  it('a window missing the metric breaks the run', () => {
    const items = samples(PC_A, T0, 1000, 20, (index) =>
      index === 5 ? fourTracks({ audioIn: { concealmentPct: undefined } }) : concealing(8),
    );
    // The run restarts with the window [T0 + 6000, T0 + 7000].
    expect(detect(call(items)).map((finding) => finding.t)).toEqual([T0 + 16_000]);
  });
});

describe('webrtc_reconnect_storm', () => {
  it('fires at the reconnectCount-th ice_restart or non-initial pair change within reconnectWindowMs', () => {
    const findings = detect(
      call([
        iceRestart(T0, PC_A),
        pairChange(T0 + 20_000, PC_A, false, false),
        pairChange(T0 + 60_000, PC_A, false, false),
        iceRestart(T0 + 61_000, PC_A),
      ]),
    );
    expect(findings).toEqual([
      {
        kind: 'webrtc_reconnect_storm',
        severity: 'high',
        t: T0 + 60_000,
        pc: PC_A,
        evidence: { count: 3, windowMs: 60_000, iceRestarts: 1, pairChanges: 2 },
      },
    ]);
  });

  it('the first selected candidate pair is not a reconnect', () => {
    expect(
      detect([
        pairChange(T0, PC_A, false, true),
        iceRestart(T0 + 1000, PC_A),
        pairChange(T0 + 2000, PC_A, false, false),
      ]),
    ).toEqual([]);
  });

  it('three reconnects spread over more than reconnectWindowMs do not fire', () => {
    expect(
      detect(call([iceRestart(T0, PC_A), iceRestart(T0 + 30_000, PC_A), iceRestart(T0 + 60_001, PC_A)])),
    ).toEqual([]);
  });

  it('counts every reconnect of the same millisecond', () => {
    const findings = detect(
      call([
        iceRestart(T0, PC_A),
        iceRestart(T0, PC_A),
        pairChange(T0, PC_A, false, false),
        iceRestart(T0, PC_A),
      ]),
    );
    expect(findings[0]?.evidence).toEqual({ count: 4, windowMs: 60_000, iceRestarts: 3, pairChanges: 1 });
  });
});

describe('webrtc_call_abandoned', () => {
  const lossy = fourTracks({
    audioIn: { lossPct: 20, concealmentPct: 20 },
    audioOut: { lossPct: 20 },
    videoIn: { lossPct: 20 },
  });

  it('fires at pc_closed for a short call with a poor score, whichever of the last sample and pc_closed comes first', () => {
    const items = call(samples(PC_A, T0, 5000, 2, () => lossy));
    const close = closed(T0 + 10_000, PC_A, 11_000);
    for (const ordered of [
      [...items, close],
      [...items.slice(0, -1), close, items.at(-1) as DetectorItem],
    ]) {
      const findings = detect(ordered);
      expect(ofKind(findings, 'webrtc_call_abandoned')).toEqual([
        expect.objectContaining({
          t: T0 + 10_000,
          pc: PC_A,
          evidence: { durationMs: 11_000, score: 24, samples: 2 },
        }),
      ]);
      const detector = createDetector();
      for (const item of ordered) detector.push(item);
      detector.advance(T0 + 10_000);
      expect(detector.findings()).toEqual(findings);
    }
  });

  it('a call closed after 10 minutes is not abandoned', () => {
    const items = call(
      samples(PC_A, T0, 5000, 2, () => lossy),
      [closed(T0 + 600_000, PC_A, 600_000)],
    );
    expect(ofKind(detect(items), 'webrtc_call_abandoned')).toEqual([]);
  });

  it('a short call that scored well, or has no sample, is not abandoned', () => {
    expect(
      detect(
        call(
          samples(PC_A, T0, 5000, 2, () => fourTracks()),
          [closed(T0 + 10_000, PC_A, 11_000)],
        ),
      ),
    ).toEqual([]);
    expect(detect(call([closed(T0 + 10_000, PC_A, 11_000)]))).toEqual([]);
  });

  it('samples covering more than abandonMs prove the call was longer than a pc_closed claiming less', () => {
    const items = call(
      samples(PC_A, T0, 5000, 7, () => lossy),
      [closed(T0 + 35_000, PC_A, 20_000)],
    );
    expect(ofKind(detect(items), 'webrtc_call_abandoned')).toEqual([]);
  });
});

describe('webrtc_packet_loss', () => {
  const lossyAudio = (lossPct: number) => fourTracks({ audioIn: { lossPct } });

  it('fires at runStart + lossSustainMs on the lossy track, for 1 s and 5 s windows alike', () => {
    const expected = {
      kind: 'webrtc_packet_loss',
      severity: 'medium',
      t: T0 + 10_000,
      pc: PC_A,
      track: 'trk_audio_in',
      evidence: { lossPct: 8, sustainedMs: 10_000, threshold: 5, mediaKind: 'audio', dir: 'in' },
    };
    expect(detect(call(samples(PC_A, T0, 1000, 30, () => lossyAudio(8))))).toEqual([expected]);
    expect(detect(call(samples(PC_A, T0, 5000, 6, () => lossyAudio(8))))).toEqual([expected]);
  });

  it('reports the peak loss of the run and the time covered when it was proven', () => {
    const findings = detect(call(samples(PC_A, T0 + 500, 3000, 4, (index) => lossyAudio(6 + index))));
    expect(findings[0]).toMatchObject({ t: T0 + 10_500, evidence: { lossPct: 9, sustainedMs: 12_000 } });
  });

  it('one spike is not sustained', () => {
    const items = samples(PC_A, T0, 1000, 30, (index) => lossyAudio(index === 7 ? 60 : 0));
    expect(detect(call(items))).toEqual([]);
  });

  it('a window missing the metric breaks the run', () => {
    const items = samples(PC_A, T0, 1000, 15, (index) =>
      index === 6 ? fourTracks({ audioIn: { lossPct: undefined } }) : lossyAudio(8),
    );
    expect(detect(call(items))).toEqual([]);
  });

  it('a sample without the track breaks the run', () => {
    const items = samples(PC_A, T0, 1000, 15, (index) =>
      index === 6 ? fourTracks().filter((track) => track.id !== 'trk_audio_in') : lossyAudio(8),
    );
    expect(detect(call(items))).toEqual([]);
  });

  it('a gap between windows breaks the run', () => {
    const first = samples(PC_A, T0, 1000, 6, () => lossyAudio(8));
    const second = samples(PC_A, T0 + 7001, 1000, 6, () => lossyAudio(8));
    expect(detect(call(first, second))).toEqual([]);
  });

  it('loss of exactly lossPct is not over it; a lower threshold override fires earlier', () => {
    const items = call(samples(PC_A, T0, 1000, 30, () => lossyAudio(5)));
    expect(detect(items)).toEqual([]);
    expect(detect(items, { thresholds: { lossPct: 4, lossSustainMs: 3000 } })).toEqual([
      expect.objectContaining({ kind: 'webrtc_packet_loss', t: T0 + 3000 }),
    ]);
  });

  it('tracks crossing in the same sample: the lowest track id is named, once per pc', () => {
    const items = call(
      samples(PC_A, T0, 1000, 30, () => fourTracks({ videoIn: { lossPct: 9 }, audioIn: { lossPct: 9 } })),
    );
    expect(detect(items)).toEqual([expect.objectContaining({ t: T0 + 10_000, track: 'trk_audio_in' })]);
  });
});

describe('webrtc_high_latency', () => {
  it('fires at runStart + rttSustainMs; 14 s is not enough', () => {
    const slow = () => fourTracks({ audioOut: { rttMs: 420 } });
    expect(detect(call(samples(PC_A, T0, 1000, 20, slow)))).toEqual([
      {
        kind: 'webrtc_high_latency',
        severity: 'medium',
        t: T0 + 15_000,
        pc: PC_A,
        track: 'trk_audio_out',
        evidence: { rttMs: 420, sustainedMs: 15_000, threshold: 300 },
      },
    ]);
    expect(
      detect(
        call(
          samples(PC_A, T0, 1000, 14, slow),
          samples(PC_A, T0 + 14_000, 1000, 10, () => fourTracks()),
        ),
      ),
    ).toEqual([]);
  });
});

describe('webrtc_cpu_limited', () => {
  it('fires when limitedByCpuPct covers over cpuLimitedPct of the observed outbound video time', () => {
    const items = call(
      samples(PC_A, T0, 5000, 6, (index) =>
        fourTracks({ videoOut: { limitedByCpuPct: index < 2 ? 100 : 0 } }),
      ),
      [closed(T0 + 30_000, PC_A, 31_000)],
    );
    expect(detect(items)).toEqual([
      {
        kind: 'webrtc_cpu_limited',
        severity: 'medium',
        t: T0 + 30_000,
        pc: PC_A,
        track: 'trk_video_out',
        evidence: { ratioPct: 33.33, limitedMs: 10_000, observedMs: 30_000, threshold: 20 },
      },
    ]);
  });

  it('qualityLimitation cpu counts the whole window when limitedByCpuPct is missing', () => {
    const items = call(
      samples(PC_A, T0, 5000, 8, (index) => [
        videoOut({ qualityLimitation: index < 2 ? 'cpu' : 'bandwidth' }),
      ]),
    );
    expect(detect(items)[0]).toMatchObject({
      kind: 'webrtc_cpu_limited',
      t: T0 + 40_000,
      evidence: { ratioPct: 25, limitedMs: 10_000, observedMs: 40_000 },
    });
  });

  it('Firefox-like samples without qualityLimitation never fire', () => {
    const firefox = [videoOut({ lossPct: 0, fps: 30, h: 720 }), videoIn({ lossPct: 0, fps: 30, h: 720 })];
    expect(detect(call(samples(PC_A, T0, 5000, 20, () => firefox)), { now: T0 + 200_000 })).toEqual([]);
  });

  it('exactly cpuLimitedPct does not fire, nor does anything before minObservedMs', () => {
    const twenty = samples(PC_A, T0, 5000, 10, () => fourTracks({ videoOut: { limitedByCpuPct: 20 } }));
    expect(detect(call(twenty))).toEqual([]);
    const short = samples(PC_A, T0, 5000, 5, () => fourTracks({ videoOut: { limitedByCpuPct: 100 } }));
    expect(detect(call(short, [closed(T0 + 25_000, PC_A, 26_000)]), { now: T0 + 100_000 })).toEqual([]);
  });
});

describe('webrtc_low_resolution', () => {
  const height = (h: number) => fourTracks({ videoIn: { h } });

  it('fires at runStart + lowResSustainMs once the height drops after a good one', () => {
    const items = call(samples(PC_A, T0, 5000, 10, (index) => height(index < 2 ? 720 : 180)));
    expect(detect(items)).toEqual([
      {
        kind: 'webrtc_low_resolution',
        severity: 'low',
        t: T0 + 30_000,
        pc: PC_A,
        track: 'trk_video_in',
        evidence: { h: 180, previousH: 720, sustainedMs: 20_000, threshold: 240 },
      },
    ]);
  });

  it('a track that never had 240 p, outbound video, or a short drop do not fire', () => {
    expect(detect(call(samples(PC_A, T0, 5000, 10, () => height(180))))).toEqual([]);
    const outbound = samples(PC_A, T0, 5000, 10, (index) =>
      fourTracks({ videoOut: { h: index < 2 ? 720 : 180 } }),
    );
    expect(detect(call(outbound))).toEqual([]);
    const short = samples(PC_A, T0, 5000, 10, (index) => height(index < 2 || index > 4 ? 720 : 180));
    expect(detect(call(short))).toEqual([]);
  });
});

describe('webrtc_relay_fallback', () => {
  it('fires once per connection at the first relayed path, from a sample or a candidate pair change', () => {
    const relayed = {
      state: 'connected',
      localType: 'relay',
      remoteType: 'srflx',
      protocol: 'udp',
      relayed: true,
    };
    const findings = detect([
      ...opening(T0, PC_A),
      ...samples(PC_A, T0, 5000, 3, () => fourTracks(), relayed),
      ...opening(T0, PC_B, true),
      pairChange(T0 + 9000, PC_B, true, false),
    ]);
    expect(findings).toEqual([
      {
        kind: 'webrtc_relay_fallback',
        severity: 'info',
        t: T0 + 500,
        pc: PC_B,
        evidence: {
          source: 'candidate_pair_change',
          localType: 'relay',
          remoteType: 'srflx',
          protocol: 'udp',
        },
      },
      {
        kind: 'webrtc_relay_fallback',
        severity: 'info',
        t: T0 + 5000,
        pc: PC_A,
        evidence: { source: 'sample', localType: 'relay', remoteType: 'srflx', protocol: 'udp' },
      },
    ]);
  });

  it('a direct path never fires', () => {
    expect(detect(call(samples(PC_A, T0, 5000, 3, () => fourTracks())))).toEqual([]);
  });
});

describe('streaming, ordering and robustness', () => {
  const lossy = samples(PC_A, T0, 1000, 12, () => fourTracks({ audioIn: { lossPct: 8 } }));

  it("push returns a batch's findings once time moves past it", () => {
    const detector = createDetector();
    for (const item of call(lossy.slice(0, 9))) expect(detector.push(item)).toEqual([]);
    expect(detector.push(lossy[9] as DetectorItem)).toEqual([]); // the 10th window crosses: pending
    expect(detector.push(lossy[10] as DetectorItem)).toEqual([
      expect.objectContaining({ kind: 'webrtc_packet_loss', t: T0 + 10_000 }),
    ]);
  });

  it('advance(now) with now at the batch time evaluates it', () => {
    const detector = createDetector();
    for (const item of call(lossy.slice(0, 10))) detector.push(item);
    expect(kinds(detector.advance(T0 + 9999))).toEqual([]);
    expect(kinds(detector.advance(T0 + 10_000))).toEqual(['webrtc_packet_loss']);
  });

  it('detect accepts the items in any order', () => {
    const items = call(lossy, [closed(T0 + 12_000, PC_A, 13_000)]);
    expect(detect(items.slice().reverse())).toEqual(detect(items));
    expect(detect(items)).toHaveLength(1);
  });

  it('a late pushed item is processed at the current batch time, deterministically', () => {
    const detector = createDetector();
    detector.push(created(T0, PC_A));
    detector.push(iceRestart(T0 + 5000, PC_A));
    detector.push(connected(T0 + 1000, PC_A)); // late: joins the batch at T0 + 5000
    expect(detector.advance(T0 + 60_000)).toEqual([]);
    const stale = createDetector();
    stale.push(created(T0, PC_A));
    stale.advance(T0 + 20_000);
    stale.push(connected(T0 + 1000, PC_A)); // too late: the timeout already fired
    expect(kinds(stale.findings())).toEqual(['webrtc_connect_failure']);
  });

  it('findings come in canonical order: t, kind, pc, track', () => {
    const findings = detect([
      ...opening(T0, PC_B, true),
      ...opening(T0, PC_A, true),
      mediaError(T0 + 500, 'NotFoundError'),
      mediaError(T0 + 500, 'NotAllowedError', 'audio', PC_A),
    ]);
    expect(findings.map((finding) => [finding.t - T0, finding.kind, finding.pc])).toEqual([
      [500, 'webrtc_device_unavailable', undefined],
      [500, 'webrtc_media_permission_denied', PC_A],
      [500, 'webrtc_relay_fallback', PC_A],
      [500, 'webrtc_relay_fallback', PC_B],
    ]);
  });

  it('never throws on malformed input; ignores what it cannot read', () => {
    const junk = [
      null,
      42,
      'call.sample',
      { type: 'call.sample' },
      { t: Number.NaN, type: 'call.event', name: 'pc_created', pc: PC_A },
      { t: T0, type: 'nav', url: '/' },
      { t: T0, type: 'call.sample', pc: PC_A, windowMs: 'x', conn: null, tracks: [null, 1, { id: 7 }] },
      { t: T0 + 1, type: 'call.sample', pc: PC_A, windowMs: 1000, tracks: 'none' },
      { t: T0 + 2, type: 'call.sample', pc: 7, windowMs: 1000, conn: {}, tracks: [] },
      { t: T0 + 3, type: 'call.event', name: 'pc_closed', pc: PC_A },
      { t: T0 + 4, type: 'call.event', name: 'track_muted' },
    ] as unknown as DetectorItem[];
    expect(detect(junk, { now: T0 + 100_000, thresholds: { lossPct: Number.NaN } as never })).toEqual([]);
    expect(detect(null as unknown as DetectorItem[])).toEqual([]);
    const detector = createDetector({ thresholds: null as never });
    for (const item of junk) expect(detector.push(item)).toEqual([]);
    expect(detector.advance(Number.NaN)).toEqual([]);
  });

  it('items of a peer connection after its pc_closed are ignored', () => {
    const items = call(
      [closed(T0, PC_A, 1000)],
      samples(PC_A, T0, 1000, 20, () => fourTracks({ audioIn: { lossPct: 30 } })),
    );
    expect(detect(items)).toEqual([]);
  });
});
