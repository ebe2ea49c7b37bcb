import type { FastifyInstance } from 'fastify';
import { ulid } from 'ulid';
import { expect } from 'vitest';
import { postChunk } from './ingest-helpers.ts';

// Generated call timelines (PROTOCOL.md §2–§3) for the calls tests and the bench: plain wire
// objects, so they go through ingest like an SDK's.

export type WireItem = Record<string, unknown> & { t: number; type: string };

export interface TimelineOptions {
  pc?: string;
  start: number;
  /** Samples (one per `windowMs`). Default 12. */
  samples?: number;
  windowMs?: number;
  /** Time from `pc_created` to `connected`; `null`: never connects. Default 150. */
  setupMs?: number | null;
  relayed?: boolean;
  network?: string;
  /** Inbound loss per sample index (default 0). */
  lossPct?: (index: number) => number;
  /** Inbound video height per sample index (default 720). */
  height?: (index: number) => number;
  /** Emit `pc_closed` after the last sample. Default true. */
  close?: boolean;
  /** `ice_candidate_error` code to emit before failing. */
  candidateError?: number;
  /** Reach `failed` (instead of connecting). */
  fail?: boolean;
}

/** A new peer connection id. */
export const newPc = () => `pc_${ulid()}`;

/** One call's items: creation, connection, samples of four tracks, close. */
export function callTimeline(options: TimelineOptions): { pc: string; items: WireItem[]; end: number } {
  const pc = options.pc ?? newPc();
  const windowMs = options.windowMs ?? 1_000;
  const count = options.samples ?? 12;
  const setupMs = options.setupMs === undefined ? 150 : options.setupMs;
  const relayed = options.relayed ?? false;
  const network = options.network ?? 'wifi';
  const start = options.start;
  const localType = relayed ? 'relay' : 'host';
  const remoteType = relayed ? 'relay' : 'srflx';
  const items: WireItem[] = [
    { t: start, type: 'call.event', pc, name: 'pc_created', state: 'new', iceServers: 1, tracked: true },
    { t: start, type: 'call.event', pc, name: 'track_added', track: 'trk_ao', kind: 'audio', dir: 'out' },
    { t: start, type: 'call.event', pc, name: 'track_added', track: 'trk_vo', kind: 'video', dir: 'out' },
    {
      t: start + 10,
      type: 'call.event',
      pc,
      name: 'connection_state',
      state: 'connecting',
      prev: 'new',
      prevMs: 10,
    },
  ];
  if (options.candidateError !== undefined) {
    items.push({
      t: start + 20,
      type: 'call.event',
      pc,
      name: 'ice_candidate_error',
      errorCode: options.candidateError,
    });
  }
  let end = start + 10;
  if (options.fail === true) {
    end = start + 5_000;
    items.push({
      t: end,
      type: 'call.event',
      pc,
      name: 'connection_state',
      state: 'failed',
      prev: 'connecting',
      prevMs: 4_990,
    });
  } else if (setupMs !== null) {
    const connectedAt = start + setupMs;
    items.push(
      {
        t: connectedAt,
        type: 'call.event',
        pc,
        name: 'connection_state',
        state: 'connected',
        prev: 'connecting',
        prevMs: setupMs - 10,
      },
      {
        t: connectedAt,
        type: 'call.event',
        pc,
        name: 'candidate_pair_change',
        localType,
        remoteType,
        protocol: 'udp',
        relayed,
        network,
        initial: true,
      },
    );
    for (let index = 0; index < count; index++) {
      const t = connectedAt + (index + 1) * windowMs;
      const loss = options.lossPct?.(index) ?? 0;
      const h = options.height?.(index) ?? 720;
      items.push({
        t,
        type: 'call.sample',
        pc,
        windowMs,
        conn: { state: 'connected', localType, remoteType, protocol: 'udp', relayed, network },
        tracks: [
          {
            id: 'trk_ai',
            kind: 'audio',
            dir: 'in',
            lossPct: loss,
            rttMs: 40,
            jitterMs: 3,
            concealmentPct: 0,
            codec: 'audio/opus',
            stalled: false,
          },
          {
            id: 'trk_ao',
            kind: 'audio',
            dir: 'out',
            lossPct: 0,
            rttMs: 40,
            codec: 'audio/opus',
            stalled: false,
          },
          {
            id: 'trk_vi',
            kind: 'video',
            dir: 'in',
            lossPct: loss,
            rttMs: 40,
            fps: 30,
            w: Math.round((h * 16) / 9),
            h,
            freezes: 0,
            freezeMs: 0,
            kbps: 1500,
            codec: 'video/VP8',
            stalled: false,
          },
          {
            id: 'trk_vo',
            kind: 'video',
            dir: 'out',
            lossPct: 0,
            fps: 30,
            h: 720,
            kbps: 1500,
            codec: 'video/VP8',
            stalled: false,
          },
        ],
      });
      end = t;
    }
  }
  if (options.close ?? true) {
    items.push({ t: end, type: 'call.event', pc, name: 'pc_closed', durationMs: end - start });
  }
  return { pc, items, end };
}

/** Session metadata for seq 0. */
export function sessionMeta(
  startedAt: number,
  overrides: { browser?: string; os?: string; device?: string; release?: string; userId?: string } = {},
) {
  return {
    sdk: { name: '@svc/browser-sdk', version: '0.1.0' },
    startedAt,
    url: 'https://app.example.com/call',
    userAgent: 'Mozilla/5.0',
    browser: { name: overrides.browser ?? 'Chrome', version: '156' },
    os: { name: overrides.os ?? 'Linux', version: '6' },
    device: overrides.device ?? 'desktop',
    viewport: { w: 1280, h: 720 },
    ...(overrides.release === undefined ? {} : { release: overrides.release }),
    environment: 'test',
    ...(overrides.userId === undefined ? {} : { user: { id: overrides.userId } }),
    recording: { mode: 'always' },
  };
}

/** A chunk's JSON bytes. */
export function chunkBytes(chunk: {
  sessionId: string;
  seq: number;
  sentAt: number;
  events: readonly WireItem[];
  meta?: unknown;
}): Buffer {
  return Buffer.from(JSON.stringify({ v: 1, ...chunk, events: [...chunk.events].sort((a, b) => a.t - b.t) }));
}

/** Ingests a chunk and expects it stored (or a duplicate when `duplicate`). */
export async function ingest(app: FastifyInstance, projectKey: string, bytes: Uint8Array, duplicate = false) {
  const response = await postChunk(app, projectKey, bytes);
  expect(response.statusCode, response.body).toBe(200);
  expect(response.json()).toMatchObject({ duplicate });
}

/** Splits items (sorted by time) into `parts` contiguous runs. */
export function splitItems(items: readonly WireItem[], parts: number): WireItem[][] {
  const sorted = [...items].sort((a, b) => a.t - b.t);
  const size = Math.ceil(sorted.length / parts);
  return Array.from({ length: parts }, (_, part) => sorted.slice(part * size, (part + 1) * size)).filter(
    (run) => run.length > 0,
  );
}
