/**
 * The long call of `long-call.bench.ts`: one session with one call (four tracks, a sample every
 * 5 s, at 1 Hz during three impaired stretches), and its chunks of 10 s of call time.
 */

import { ulid } from 'ulid';
import { chunkBytes, sessionMeta, type WireItem } from '../test/call-timelines.ts';

/** Call time per chunk. */
export const CHUNK_MS = 10_000;
/** The three impaired stretches, minutes from the start (scaled to shorter calls). */
const STRETCHES = [
  { from: 20, to: 30, kind: 'loss' },
  { from: 55, to: 63, kind: 'freeze' },
  { from: 95, to: 105, kind: 'delay' },
] as const;

/** A deterministic jitter in [-spread, spread] for sample `index`. */
const jitter = (index: number, spread: number) => ((index * 7919) % (2 * spread + 1)) - spread;

export function longCall(
  start: number,
  minutes: number,
): { items: WireItem[]; end: number; trackSamples: number } {
  const pc = `pc_${ulid()}`;
  const scale = minutes / 120;
  const stretchAt = (t: number) =>
    STRETCHES.find(
      (stretch) => t >= start + stretch.from * scale * 60_000 && t < start + stretch.to * scale * 60_000,
    );
  const items: WireItem[] = [
    { t: start, type: 'call.event', pc, name: 'pc_created', state: 'new', iceServers: 1, tracked: true },
    { t: start, type: 'call.event', pc, name: 'track_added', track: 'trk_ao', kind: 'audio', dir: 'out' },
    { t: start, type: 'call.event', pc, name: 'track_added', track: 'trk_vo', kind: 'video', dir: 'out' },
    {
      t: start + 200,
      type: 'call.event',
      pc,
      name: 'connection_state',
      state: 'connected',
      prev: 'connecting',
      prevMs: 190,
    },
    {
      t: start + 200,
      type: 'call.event',
      pc,
      name: 'candidate_pair_change',
      localType: 'host',
      remoteType: 'srflx',
      protocol: 'udp',
      relayed: false,
      network: 'wifi',
      initial: true,
    },
  ];
  const end = start + minutes * 60_000;
  let t = start + 200;
  let index = 0;
  let trackSamples = 0;
  for (;;) {
    const stretch = stretchAt(t);
    const windowMs = stretch === undefined ? 5_000 + jitter(index, 25) : 1_000 + jitter(index, 5);
    if (t + windowMs > end) break;
    t += windowMs;
    index += 1;
    const loss = stretch?.kind === 'loss' ? 9 : 0.2;
    const frozen = stretch?.kind === 'freeze';
    const delayed = stretch?.kind === 'delay';
    const rttMs = delayed ? 450 : 40 + (index % 7);
    const tracks = [
      {
        id: 'trk_ai',
        kind: 'audio',
        dir: 'in',
        lossPct: loss,
        rttMs,
        jitterMs: 3,
        concealmentPct: delayed ? 12 : 0,
        codec: 'audio/opus',
        stalled: false,
      },
      { id: 'trk_ao', kind: 'audio', dir: 'out', lossPct: 0.1, rttMs, codec: 'audio/opus', stalled: false },
      {
        id: 'trk_vi',
        kind: 'video',
        dir: 'in',
        lossPct: loss,
        rttMs,
        fps: frozen ? 4 : 30,
        w: frozen ? 320 : 1280,
        h: frozen ? 180 : 720,
        freezes: frozen ? 1 : 0,
        freezeMs: frozen ? Math.round(windowMs * 0.6) : 0,
        kbps: frozen ? 200 : 1500,
        codec: 'video/VP8',
        stalled: false,
      },
      {
        id: 'trk_vo',
        kind: 'video',
        dir: 'out',
        lossPct: 0.1,
        fps: 30,
        h: 720,
        kbps: 1500,
        codec: 'video/VP8',
        stalled: false,
      },
    ];
    trackSamples += tracks.length;
    items.push({
      t,
      type: 'call.sample',
      pc,
      windowMs,
      conn: {
        state: 'connected',
        localType: 'host',
        remoteType: 'srflx',
        protocol: 'udp',
        relayed: false,
        network: 'wifi',
      },
      tracks,
    });
  }
  items.push({ t, type: 'call.event', pc, name: 'pc_closed', durationMs: t - start });
  return { items, end: t, trackSamples };
}

/** The call's chunks, one per 10 s of call time (seq 0 with the session's meta). */
export function chunksOf(sessionId: string, items: readonly WireItem[], start: number): Buffer[] {
  const groups: WireItem[][] = [];
  for (const item of items) {
    const slot = Math.floor((item.t - start) / CHUNK_MS);
    const group = groups[slot] ?? [];
    group.push(item);
    groups[slot] = group;
  }
  const bodies: Buffer[] = [];
  for (const [slot, events] of groups.entries()) {
    if (events === undefined) continue;
    bodies.push(
      chunkBytes({
        sessionId,
        seq: bodies.length,
        sentAt: Math.max(start + (slot + 1) * CHUNK_MS, ...events.map((event) => event.t)),
        ...(bodies.length === 0 ? { meta: sessionMeta(start) } : {}),
        events,
      }),
    );
  }
  return bodies;
}
