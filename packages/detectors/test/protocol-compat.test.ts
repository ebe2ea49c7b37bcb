/**
 * The detectors on real data: the call chunk @svc/protocol builds from Chromium 156 getStats()
 * dumps (four two-peer calls: loopback, TURN relay, relay with ~10 % loss, relay squeezed to
 * 300 kbit/s with a 1.77 s freeze and ~400 ms RTT; one ~6–9 s sample per peer connection).
 * `@svc/protocol`'s parsed events go to `detect` without conversion: if the types stopped being
 * assignable, typecheck would fail here.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import {
  DETECTOR_KINDS as PROTOCOL_DETECTOR_KINDS,
  type CallEvent as ProtocolCallEvent,
  type CallSample as ProtocolCallSample,
  parseChunk,
  type SessionEvent,
} from '@svc/protocol';
import { scoreSample } from '@svc/quality-score';
import { describe, expect, it } from 'vitest';
import { DETECTOR_KINDS, type DetectorKind, detect, type Finding } from '../src/index.ts';

const path = createRequire(import.meta.url).resolve('@svc/protocol/fixtures/valid/Chunk/call.json');
const parsed = parseChunk(JSON.parse(readFileSync(path, 'utf8')));
if (!parsed.success) throw new Error(parsed.error.message);

const isCallItem = (event: SessionEvent): event is ProtocolCallSample | ProtocolCallEvent =>
  event.type === 'call.sample' || event.type === 'call.event';
const items: (ProtocolCallSample | ProtocolCallEvent)[] = parsed.chunk.events.filter(isCallItem);
const realSamples = items.filter((item): item is ProtocolCallSample => item.type === 'call.sample');
const peerConnections = [...new Set(realSamples.map((item) => item.pc))];
const relayed = realSamples.filter((item) => item.conn.relayed === true).map((item) => item.pc);
const direct = realSamples.filter((item) => item.conn.relayed === false).map((item) => item.pc);

/** The real sample of the peer connection whose inbound tracks have the largest loss. */
function realSample(predicate: (sample: ProtocolCallSample) => boolean): ProtocolCallSample {
  const found = realSamples.find(predicate);
  if (found === undefined) throw new Error('no such sample in the fixture');
  return found;
}
const lossyInbound = realSample((item) =>
  item.tracks.some(
    (track) =>
      track.dir === 'in' && track.kind === 'audio' && (track.lossPct ?? 0) > 9 && (track.rttMs ?? 0) < 100,
  ),
);
const starvedInbound = realSample((item) => item.tracks.some((track) => (track.maxFreezeMs ?? 0) > 1000));
const starvedOutbound = realSample((item) =>
  item.tracks.some((track) => track.dir === 'out' && track.qualityLimitation === 'bandwidth'),
);

const byKind = (findings: readonly Finding[], kind: DetectorKind) =>
  findings.filter((finding) => finding.kind === kind);

/**
 * A longer call from one real sample: its track entries repeated over `count` consecutive windows
 * of the real window length, on a fresh peer connection that lives `durationMs`.
 */
function repeated(real: ProtocolCallSample, count: number, durationMs = 600_000) {
  const pc = 'pc_01JD2S5V8Q8C4Y3K2W9T7N6MZZ';
  const start = real.t + 1_000_000;
  const created: ProtocolCallEvent = {
    t: start,
    type: 'call.event',
    pc,
    name: 'pc_created',
    state: 'new',
    iceServers: 1,
    tracked: true,
  };
  const timeline: (ProtocolCallSample | ProtocolCallEvent)[] = [created];
  for (let index = 1; index <= count; index++) {
    timeline.push({ ...real, pc, t: start + index * real.windowMs });
  }
  const end = start + count * real.windowMs;
  timeline.push({ t: end, type: 'call.event', pc, name: 'pc_closed', durationMs });
  return { pc, start, end, timeline };
}

describe('the recorded Chromium 156 calls', () => {
  const findings = detect(items);

  it('has the eight peer connections, six of them relayed', () => {
    expect(peerConnections).toHaveLength(8);
    expect(new Set(relayed).size).toBe(6);
    expect(new Set(direct).size).toBe(2);
  });

  it('relay_fallback fires exactly once for each relayed pc, at its candidate_pair_change', () => {
    const relays = byKind(findings, 'webrtc_relay_fallback');
    expect(relays.map((finding) => finding.pc).sort()).toEqual([...new Set(relayed)].sort());
    for (const finding of relays) {
      const change = items.find(
        (item) =>
          item.type === 'call.event' && item.name === 'candidate_pair_change' && item.pc === finding.pc,
      );
      expect(finding.t).toBe(change?.t);
      expect(finding.evidence).toEqual({
        source: 'candidate_pair_change',
        localType: 'relay',
        remoteType: 'relay',
        protocol: 'udp',
      });
    }
  });

  it('nothing fires for the loopback pcs', () => {
    expect(findings.filter((finding) => direct.includes(finding.pc ?? ''))).toEqual([]);
  });

  it('the four short lossy and starved calls are abandoned (closed within 30 s, scored under 60)', () => {
    const abandoned = byKind(findings, 'webrtc_call_abandoned');
    expect(abandoned).toHaveLength(4);
    for (const finding of abandoned) {
      const sample = realSamples.find((item) => item.pc === finding.pc) as ProtocolCallSample;
      // pc_closed has the same t as the pc's last sample: the sample is seen whatever the order.
      expect(finding.t).toBe(sample.t);
      expect(finding.evidence.score).toBe(sample.score);
      expect(finding.evidence.score).toBe(scoreSample(sample));
      expect(finding.evidence.score).toBeLessThan(60);
    }
    // The clean relayed call scored 96: not abandoned although it lasted 6 s.
    const kinds = new Set(findings.map((finding) => finding.kind));
    expect([...kinds].sort()).toEqual(['webrtc_call_abandoned', 'webrtc_relay_fallback']);
  });

  it('the same findings come out of the items in any order, and with a later now', () => {
    expect(detect(items.slice().reverse())).toEqual(findings);
    expect(detect(items, { now: (items.at(-1)?.t ?? 0) + 3_600_000 })).toEqual(findings);
  });

  describe('near misses that hold on the real data', () => {
    const frozen = starvedInbound.tracks.find((track) => track.kind === 'video' && track.dir === 'in');
    const lossyAudio = lossyInbound.tracks.find((track) => track.kind === 'audio' && track.dir === 'in');

    it('the 1.77 s freeze is under freezeSingleMs; its >5 % frozen share is judged on under minObservedMs', () => {
      expect(frozen?.maxFreezeMs).toBe(1771);
      expect(((frozen?.freezeMs ?? 0) / starvedInbound.windowMs) * 100).toBeGreaterThan(5);
      expect(starvedInbound.windowMs).toBeLessThan(30_000);
      expect(byKind(findings, 'webrtc_freeze')).toEqual([]);
      // Near indeed: a shorter minimum observation would judge it at pc_closed.
      const judged = detect(items, { thresholds: { minObservedMs: 5000 } });
      expect(byKind(judged, 'webrtc_freeze')).toEqual([
        expect.objectContaining({
          pc: starvedInbound.pc,
          t: starvedInbound.t,
          evidence: expect.objectContaining({ reason: 'ratio', ratioPct: 20.11 }),
        }),
      ]);
    });

    it('the ~400 ms RTT lasts under rttSustainMs, the ~10 % loss under lossSustainMs', () => {
      expect(starvedInbound.tracks.every((track) => (track.rttMs ?? 0) > 300)).toBe(true);
      expect(starvedInbound.windowMs).toBeLessThan(15_000);
      expect(lossyAudio?.lossPct).toBeGreaterThan(10);
      expect(lossyInbound.windowMs).toBeLessThan(10_000);
      expect(byKind(findings, 'webrtc_high_latency')).toEqual([]);
      expect(byKind(findings, 'webrtc_packet_loss')).toEqual([]);
      expect(byKind(findings, 'webrtc_audio_dropout')).toEqual([]);
      const shorter = detect(items, { thresholds: { rttSustainMs: 8000, lossSustainMs: 6000 } });
      expect(
        byKind(shorter, 'webrtc_high_latency')
          .map((finding) => finding.pc)
          .sort(),
      ).toEqual([starvedInbound.pc, starvedOutbound.pc].sort());
      expect(byKind(shorter, 'webrtc_packet_loss')).toHaveLength(4);
    });

    it('360 p is not low resolution; bandwidth (not CPU) limited the 300 kbit sender', () => {
      expect(frozen?.h).toBe(360);
      expect(starvedOutbound.tracks.find((track) => track.kind === 'video')?.limitedByCpuPct).toBe(0);
      expect(byKind(detect(items, { thresholds: { minObservedMs: 1000 } }), 'webrtc_cpu_limited')).toEqual(
        [],
      );
    });
  });

  describe('longer calls built from the real samples', () => {
    it('the ~10 % loss call, repeated over 6.2 s windows, fires packet_loss and audio_dropout at start + 10 s', () => {
      const { pc, start, timeline } = repeated(lossyInbound, 3);
      const found = detect(timeline);
      // Both inbound tracks lose ~10 %: the packet_loss finding names the lowest track id.
      const lossyTracks = lossyInbound.tracks
        .filter((track) => (track.lossPct ?? 0) > 5)
        .map((track) => track.id);
      expect(found.map((finding) => [finding.kind, finding.t - start, finding.track])).toEqual([
        ['webrtc_relay_fallback', lossyInbound.windowMs, undefined],
        ['webrtc_audio_dropout', 10_000, lossyAudio(lossyInbound).id],
        ['webrtc_packet_loss', 10_000, lossyTracks.sort()[0]],
      ]);
      expect(found.every((finding) => finding.pc === pc)).toBe(true);
    });

    it('the 300 kbit call fires high_latency at start + 15 s and the freeze ratio at pc_closed', () => {
      const { start, end, timeline } = repeated(starvedInbound, 4);
      const found = detect(timeline);
      expect(found.map((finding) => [finding.kind, finding.t - start])).toEqual([
        ['webrtc_relay_fallback', starvedInbound.windowMs],
        ['webrtc_audio_dropout', 10_000],
        ['webrtc_packet_loss', 10_000],
        ['webrtc_high_latency', 15_000],
        ['webrtc_freeze', end - start],
      ]);
      expect(byKind(found, 'webrtc_freeze')[0]?.evidence).toEqual({
        reason: 'ratio',
        ratioPct: 20.11,
        freezeMs: 4 * 1771,
        observedMs: 4 * starvedInbound.windowMs,
        threshold: 5,
      });
    });

    it('the 300 kbit call closed after 35 s is abandoned only when durationMs says it was short', () => {
      expect(byKind(detect(repeated(starvedInbound, 3, 26_500).timeline), 'webrtc_call_abandoned')).toEqual([
        expect.objectContaining({ evidence: { durationMs: 26_500, score: 0, samples: 3 } }),
      ]);
      expect(byKind(detect(repeated(starvedInbound, 3, 600_000).timeline), 'webrtc_call_abandoned')).toEqual(
        [],
      );
    });
  });

  it('the protocol lists the same 13 detector kinds', () => {
    expect([...DETECTOR_KINDS]).toEqual([...PROTOCOL_DETECTOR_KINDS]);
  });
});

function lossyAudio(sample: ProtocolCallSample) {
  const track = sample.tracks.find((entry) => entry.kind === 'audio' && entry.dir === 'in');
  if (track === undefined) throw new Error('no inbound audio');
  return track;
}
