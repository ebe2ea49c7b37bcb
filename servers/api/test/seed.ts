import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import type { DeviceClass, User } from '@svc/protocol';
import { monotonicFactory } from 'ulid';
import { projectDataKey } from '../src/modules/projects/data-key.ts';
import { chunkBlobKey, createChunkAttemptId, sealChunk } from '../src/modules/sessions/chunk-storage.ts';
import { type BlobStore, createFileBlobStore } from '../src/platform/blob-store/index.ts';
import { loadMasterKey, type MasterKey } from '../src/platform/crypto/index.ts';
import type {
  NewSessionSignal,
  SignalSeverity,
} from '../src/platform/database/tables/session-signals.table.ts';
import type { TestApp, TestProject } from './test-app.ts';

// Stores sessions the way POST /v1/ingest does, without going through it: the chunk JSON is
// sealed into the blob store under a per-attempt key recorded in the row, and the session,
// chunk and signal rows are what ingest indexes (errors `high`, custom events their severity,
// gaps and triggers `info`; signal indexes point into the events array as sent).

type WireEvent = Record<string, unknown> & { t: number; type: string };
type WireChunk = Record<string, unknown> & { seq: number; sentAt: number; events: WireEvent[] };

const require = createRequire(import.meta.url);
function fixture(name: string): WireChunk {
  return JSON.parse(
    readFileSync(require.resolve(`@svc/protocol/fixtures/valid/Chunk/${name}.json`), 'utf8'),
  ) as WireChunk;
}
const FIRST_CHUNK = fixture('recording-seq-0');
const LATER_CHUNK = fixture('recording-seq-1');
/** `meta.startedAt` of the fixtures: event times are kept as offsets from it. */
const FIXTURE_START = (FIRST_CHUNK.meta as { startedAt: number }).startedAt;
/** How much time each later chunk (seq >= 1) covers. */
const CHUNK_SPAN_MS = 20_000;

const nextUlid = monotonicFactory();
export const createSessionId = (time?: number) => `ses_${nextUlid(time)}`;
export const createVisitId = (time?: number) => `vis_${nextUlid(time)}`;

const storages = new WeakMap<TestApp, Promise<{ blobStore: BlobStore; masterKey: MasterKey }>>();

/**
 * The test app's blob store and master key, opened on its data directory (the app keeps its
 * own in its encapsulated context): to store chunks, or to lose or damage one in a test.
 */
export function testStorage(test: TestApp): Promise<{ blobStore: BlobStore; masterKey: MasterKey }> {
  let storage = storages.get(test);
  if (storage === undefined) {
    storage = loadMasterKey({ dataDirectory: test.dataDirectory }).then((masterKey) => ({
      masterKey,
      blobStore: createFileBlobStore({ directory: join(test.dataDirectory, 'blobs') }),
    }));
    storages.set(test, storage);
  }
  return storage;
}

export interface SeedSessionOptions {
  id?: string;
  /** Omitted: the session belongs to no visit. */
  visitId?: string;
  /** `meta.startedAt`, epoch ms (default: the fixture's). */
  startedAt?: number;
  /** Cut the recording at this duration (the last chunk gets an event at exactly that time). */
  durationMs?: number;
  /** The seqs stored (default `[0, 1]`); seq 0 carries `meta`. */
  seqs?: readonly number[];
  url?: string;
  browser?: { name: string; version: string };
  os?: { name: string; version: string };
  device?: DeviceClass;
  /** `null` removes it from meta. */
  release?: string | null;
  environment?: string | null;
  /** Replaces the fixture's user (meta and `identify` events); `null`: no user. */
  user?: User | null;
  /** Drop the fixture's errors, triggers, gaps and custom events with a severity. */
  quiet?: boolean;
  /** Events added to the chunk of that seq; their `t` is an offset from `startedAt`. */
  extraEvents?: Record<number, WireEvent[]>;
}

export interface SeededChunk {
  seq: number;
  /** The chunk's JSON bytes, as an SDK would have sent them. */
  json: Uint8Array;
  events: WireEvent[];
  blobKey: string;
}

export interface SeededSession {
  id: string;
  projectId: string;
  chunks: SeededChunk[];
}

const SEVERITY_RANK: readonly SignalSeverity[] = ['info', 'low', 'medium', 'high', 'critical'];

function signalOf(
  event: WireEvent,
): Omit<NewSessionSignal, 'project_id' | 'session_id' | 'seq' | 'event_index'> | undefined {
  const base = { t: new Date(event.t), message: null, details: '{}' };
  switch (event.type) {
    case 'error':
      return {
        ...base,
        kind: 'error',
        severity: 'high',
        name: (event.name as string | undefined) ?? 'Error',
        message: event.message as string,
        details: JSON.stringify({ source: event.source, stack: event.stack }),
      };
    case 'custom':
      return {
        ...base,
        kind: 'custom',
        severity: (event.severity as SignalSeverity | undefined) ?? null,
        name: event.name as string,
        details: JSON.stringify(event.props === undefined ? {} : { props: event.props }),
      };
    case 'gap':
      return {
        ...base,
        kind: 'gap',
        severity: 'info',
        name: event.reason as string,
        details: JSON.stringify({ fromT: event.fromT, toT: event.toT, reason: event.reason }),
      };
    case 'trigger':
      return { ...base, kind: 'trigger', severity: 'info', name: event.name as string };
    default:
      return undefined;
  }
}

function isProblem(event: WireEvent): boolean {
  return (
    event.type === 'error' ||
    event.type === 'trigger' ||
    event.type === 'gap' ||
    (event.type === 'custom' && event.severity !== undefined)
  );
}

function buildChunks(id: string, options: SeedSessionOptions): WireChunk[] {
  const startedAt = options.startedAt ?? FIXTURE_START;
  const seqs = [...(options.seqs ?? [0, 1])].sort((left, right) => left - right);
  return seqs.map((seq) => {
    const chunk = structuredClone(seq === 0 ? FIRST_CHUNK : LATER_CHUNK);
    const shift = startedAt - FIXTURE_START + (seq === 0 ? 0 : (seq - 1) * CHUNK_SPAN_MS);
    chunk.sessionId = id;
    chunk.seq = seq;
    if (options.visitId === undefined) delete chunk.visitId;
    else chunk.visitId = options.visitId;
    let events = chunk.events.map((event) => shiftEvent(event, shift));
    if (options.quiet) events = events.filter((event) => !isProblem(event));
    if (options.user !== undefined) events = events.filter((event) => event.type !== 'identify');
    for (const extra of options.extraEvents?.[seq] ?? []) events.push({ ...extra, t: startedAt + extra.t });
    if (options.durationMs !== undefined) {
      const end = startedAt + options.durationMs;
      events = events.filter((event) => event.t <= end);
      if (seq === seqs.at(-1)) events.push({ t: end, type: 'custom', name: 'seed_end' });
    }
    chunk.events = events;
    chunk.sentAt = Math.max(startedAt, ...events.map((event) => event.t)) + 500;
    if (seq === 0) chunk.meta = metaOf(chunk.meta as Record<string, unknown>, startedAt, options);
    return chunk;
  });
}

function shiftEvent(event: WireEvent, shift: number): WireEvent {
  const shifted: WireEvent = { ...event, t: event.t + shift };
  if (event.type === 'gap') {
    shifted.fromT = (event.fromT as number) + shift;
    shifted.toT = (event.toT as number) + shift;
  }
  if (event.type === 'rrweb') {
    const data = event.data as Record<string, unknown>;
    shifted.data = { ...data, timestamp: (data.timestamp as number) + shift };
  }
  return shifted;
}

function metaOf(meta: Record<string, unknown>, startedAt: number, options: SeedSessionOptions) {
  const result: Record<string, unknown> = { ...meta, startedAt };
  if (options.url !== undefined) result.url = options.url;
  if (options.browser !== undefined) result.browser = options.browser;
  if (options.os !== undefined) result.os = options.os;
  if (options.device !== undefined) result.device = options.device;
  for (const key of ['release', 'environment', 'user'] as const) {
    const value = options[key];
    if (value === null) delete result[key];
    else if (value !== undefined) result[key] = value;
  }
  return result;
}

/**
 * Stores one session of `project` as ingest would: sealed chunk blobs and the session, chunk
 * and signal rows.
 *
 * @example
 * ```ts
 * const session = await seedSession(test, test.first, { seqs: [0, 2], device: 'mobile' });
 * ```
 */
export async function seedSession(
  test: TestApp,
  project: TestProject,
  options: SeedSessionOptions = {},
): Promise<SeededSession> {
  const { blobStore, masterKey } = await testStorage(test);
  const database = test.database.database;
  const projectId = project.project.id;
  const id = options.id ?? createSessionId(options.startedAt);
  const wireChunks = buildChunks(id, options);
  const dataKey = projectDataKey(masterKey, project.project);

  const chunks: SeededChunk[] = [];
  for (const chunk of wireChunks) {
    const json = new TextEncoder().encode(JSON.stringify(chunk, null, 2));
    const place = { projectId, sessionId: id, seq: chunk.seq };
    const sealed = await sealChunk(dataKey, { json }, place);
    const blobKey = chunkBlobKey(projectId, id, chunk.seq, createChunkAttemptId());
    await blobStore.put(blobKey, sealed);
    chunks.push({ seq: chunk.seq, json, events: chunk.events, blobKey });
  }

  const signals: NewSessionSignal[] = chunks.flatMap((chunk) =>
    chunk.events.flatMap((event, index) => {
      const signal = signalOf(event);
      return signal === undefined
        ? []
        : [{ ...signal, project_id: projectId, session_id: id, seq: chunk.seq, event_index: index }];
    }),
  );
  const times = chunks.flatMap((chunk) => chunk.events.map((event) => event.t));
  const meta = wireChunks.find((chunk) => chunk.seq === 0)?.meta as
    | (Record<string, unknown> & { startedAt: number })
    | undefined;
  const start = Math.min(meta?.startedAt ?? Number.POSITIVE_INFINITY, ...times);
  const end = Math.max(start, ...times);
  const identified = chunks
    .flatMap((chunk) => chunk.events)
    .filter((event) => event.type === 'identify')
    .at(-1)?.user as User | undefined;
  const user = identified ?? (meta?.user as User | undefined);
  const nameAndVersion = (key: string) => meta?.[key] as { name: string; version: string } | undefined;
  const level = signals.reduce<SignalSeverity | undefined>(
    (highest, signal) =>
      signal.severity != null &&
      (highest === undefined || SEVERITY_RANK.indexOf(signal.severity) > SEVERITY_RANK.indexOf(highest))
        ? signal.severity
        : highest,
    undefined,
  );

  await database.transaction().execute(async (transaction) => {
    await transaction
      .insertInto('sessions')
      .values({
        project_id: projectId,
        id,
        visit_id: options.visitId ?? null,
        started_at: new Date(start),
        last_event_at: new Date(end),
        duration_ms: end - start,
        url: (meta?.url as string | undefined) ?? null,
        referrer: (meta?.referrer as string | undefined) ?? null,
        user_agent: (meta?.userAgent as string | undefined) ?? null,
        browser_name: nameAndVersion('browser')?.name ?? null,
        browser_version: nameAndVersion('browser')?.version ?? null,
        os_name: nameAndVersion('os')?.name ?? null,
        os_version: nameAndVersion('os')?.version ?? null,
        device: (meta?.device as string | undefined) ?? null,
        viewport_width: (meta?.viewport as { w: number } | undefined)?.w ?? null,
        viewport_height: (meta?.viewport as { h: number } | undefined)?.h ?? null,
        release: (meta?.release as string | undefined) ?? null,
        environment: (meta?.environment as string | undefined) ?? null,
        user_id: user?.id ?? null,
        user_email: user?.email ?? null,
        user_name: user?.name ?? null,
        recording_mode: (meta?.recording as { mode: string } | undefined)?.mode ?? null,
        sdk_name: nameAndVersion('sdk')?.name ?? null,
        sdk_version: nameAndVersion('sdk')?.version ?? null,
        error_count: signals.filter((signal) => signal.kind === 'error').length,
        level: level ?? null,
        chunk_count: chunks.length,
        max_seq: Math.max(-1, ...chunks.map((chunk) => chunk.seq)),
        stored_bytes: 0,
      })
      .execute();
    for (const [position, chunk] of chunks.entries()) {
      const times = chunk.events.map((event) => event.t);
      await transaction
        .insertInto('chunks')
        .values({
          project_id: projectId,
          session_id: id,
          seq: chunk.seq,
          blob_key: chunk.blobKey,
          content_sha256: createHash('sha256').update(chunk.json).digest(),
          encoding: 'json',
          received_bytes: chunk.json.byteLength,
          inflated_bytes: chunk.json.byteLength,
          stored_bytes: chunk.json.byteLength,
          event_count: chunk.events.length,
          first_event_at: times.length === 0 ? null : new Date(Math.min(...times)),
          last_event_at: times.length === 0 ? null : new Date(Math.max(...times)),
          sent_at: new Date((wireChunks[position] as WireChunk).sentAt),
        })
        .execute();
    }
    if (signals.length > 0) await transaction.insertInto('session_signals').values(signals).execute();
  });
  return { id, projectId, chunks };
}
