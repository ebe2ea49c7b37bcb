/**
 * Builders of call timelines (PROTOCOL.md §2 and §3) for the tests, the vectors and the bench.
 * Every item is a plain protocol-shaped object, so a timeline is also valid wire data.
 */
import type { CallEvent, CallSample, ConnectionInfo, TrackSample } from '../src/types.ts';

/** 2025-11-21T04:40:00Z: the start of every built timeline. */
export const T0 = 1_763_700_000_000;

/** Peer connection ids in the protocol's `pc_<ULID>` form. */
export const PC_A = 'pc_01JD2S5V8Q8C4Y3K2W9T7N6MAA';
export const PC_B = 'pc_01JD2S5V8Q8C4Y3K2W9T7N6MBB';
export const PC_C = 'pc_01JD2S5V8Q8C4Y3K2W9T7N6MCC';

type Metrics = Omit<TrackSample, 'id' | 'kind' | 'dir'>;

export const audioIn = (metrics: Metrics = {}, id = 'trk_audio_in'): TrackSample => ({
  id,
  kind: 'audio',
  dir: 'in',
  ...metrics,
});
export const audioOut = (metrics: Metrics = {}, id = 'trk_audio_out'): TrackSample => ({
  id,
  kind: 'audio',
  dir: 'out',
  ...metrics,
});
export const videoIn = (metrics: Metrics = {}, id = 'trk_video_in'): TrackSample => ({
  id,
  kind: 'video',
  dir: 'in',
  ...metrics,
});
export const videoOut = (metrics: Metrics = {}, id = 'trk_video_out'): TrackSample => ({
  id,
  kind: 'video',
  dir: 'out',
  ...metrics,
});

/** Clean metrics of a one-to-one call's four tracks, all moving packets. */
export const clean = {
  audioIn: { lossPct: 0, rttMs: 40, jitterMs: 3, concealmentPct: 0, stalled: false },
  audioOut: { lossPct: 0, rttMs: 40, jitterMs: 3, stalled: false },
  videoIn: {
    lossPct: 0,
    rttMs: 40,
    fps: 30,
    h: 720,
    freezes: 0,
    freezeMs: 0,
    maxFreezeMs: 0,
    stalled: false,
  },
  videoOut: {
    lossPct: 0,
    rttMs: 40,
    fps: 30,
    h: 720,
    qualityLimitation: 'none',
    limitedByCpuPct: 0,
    stalled: false,
  },
} as const satisfies Record<string, Metrics>;

/** The four clean tracks, each with `overrides[trackName]` merged in. */
export function fourTracks(
  overrides: Partial<Record<'audioIn' | 'audioOut' | 'videoIn' | 'videoOut', Metrics>> = {},
): TrackSample[] {
  return [
    audioIn({ ...clean.audioIn, ...overrides.audioIn }),
    audioOut({ ...clean.audioOut, ...overrides.audioOut }),
    videoIn({ ...clean.videoIn, ...overrides.videoIn }),
    videoOut({ ...clean.videoOut, ...overrides.videoOut }),
  ];
}

const connectedHost: ConnectionInfo = {
  state: 'connected',
  localType: 'host',
  remoteType: 'srflx',
  protocol: 'udp',
  relayed: false,
};

export function sample(
  t: number,
  pc: string,
  windowMs: number,
  tracks: readonly TrackSample[],
  conn: ConnectionInfo = connectedHost,
): CallSample {
  return { t, type: 'call.sample', pc, windowMs, conn, tracks };
}

/**
 * `count` contiguous samples of `windowMs` each, the first window starting at `from`; `tracks`
 * gives each sample's track entries from its index.
 */
export function samples(
  pc: string,
  from: number,
  windowMs: number,
  count: number,
  tracks: (index: number) => readonly TrackSample[],
  conn?: ConnectionInfo,
): CallSample[] {
  return Array.from({ length: count }, (_, index) =>
    sample(from + (index + 1) * windowMs, pc, windowMs, tracks(index), conn),
  );
}

const event = (t: number, name: string, fields: object): CallEvent => ({
  t,
  type: 'call.event',
  name,
  ...fields,
});

export const created = (t: number, pc: string, tracked = true): CallEvent =>
  event(t, 'pc_created', { pc, state: 'new', iceServers: 2, tracked });
export const connectionState = (t: number, pc: string, state: string, prev: string, prevMs = 0): CallEvent =>
  event(t, 'connection_state', { pc, state, prev, prevMs });
export const connected = (t: number, pc: string): CallEvent =>
  connectionState(t, pc, 'connected', 'connecting');
export const pairChange = (t: number, pc: string, relayed: boolean, initial: boolean): CallEvent =>
  event(t, 'candidate_pair_change', {
    pc,
    localType: relayed ? 'relay' : 'host',
    remoteType: 'srflx',
    protocol: 'udp',
    relayed,
    network: 'wifi',
    initial,
  });
export const iceRestart = (t: number, pc: string): CallEvent => event(t, 'ice_restart', { pc });
export const trackEvent = (
  t: number,
  pc: string,
  name: 'track_added' | 'track_muted' | 'track_unmuted' | 'track_ended',
  track: TrackSample,
  freezeMs?: number,
): CallEvent =>
  event(t, name, {
    pc,
    track: track.id,
    kind: track.kind,
    dir: track.dir,
    ...(freezeMs === undefined ? {} : { freezeMs }),
  });
export const mediaError = (t: number, errorName: string, kind?: string, pc?: string): CallEvent =>
  event(t, 'media_error', {
    errorName,
    class:
      errorName === 'NotAllowedError'
        ? 'permission_denied'
        : errorName === 'NotReadableError'
          ? 'device_in_use'
          : errorName === 'NotFoundError'
            ? 'device_not_found'
            : 'unknown',
    ...(kind === undefined ? {} : { kind }),
    ...(pc === undefined ? {} : { pc }),
  });
export const closed = (t: number, pc: string, durationMs: number): CallEvent =>
  event(t, 'pc_closed', { pc, durationMs });

/** `pc_created`, `connected` 500 ms later and the first (direct) candidate pair. */
export function opening(t: number, pc: string, relayed = false): CallEvent[] {
  return [created(t, pc), connected(t + 500, pc), pairChange(t + 500, pc, relayed, true)];
}
