// What analysis reads of a session: its row, its chunks (decrypted, in order, one at a time with
// a small read-ahead so a two-hour session costs memory for a few chunks, not all of them), its
// calls, findings and errors' stored frames. Every query is scoped by the project.

import type { Kysely } from 'kysely';
import type { BlobStore } from '../../platform/blob-store/index.ts';
import type { MasterKey } from '../../platform/crypto/index.ts';
import type { Database } from '../../platform/database/schema.ts';
import type { Project } from '../../platform/database/tables/projects.table.ts';
import type { Session } from '../../platform/database/tables/sessions.table.ts';
import { readSettings } from '../projects/index.ts';
import {
  type ChunkReadLog,
  chunkEvents,
  findSession,
  listChunks,
  readChunkBytes,
} from '../sessions/index.ts';
import { buildReproduction, type Reproduction } from './repro.ts';
import { createTimelineBuilder, type TimelineItem } from './timeline.ts';
import {
  buildTranscript,
  type Transcript,
  type TranscriptCall,
  type TranscriptFinding,
  type TranscriptFrame,
  type TranscriptSources,
} from './transcript.ts';

/** Where analysis reads from: the database, and the blob store with the master key for chunks. */
export interface AnalysisStores {
  database: Kysely<Database>;
  blobStore: BlobStore;
  masterKey: MasterKey;
}

/** Chunks read ahead of the one being read. */
const READ_AHEAD = 4;

/** The project as analysis needs it. */
export type AnalysisProject = Pick<Project, 'id' | 'wrapped_data_key' | 'settings'>;

/** A session's timeline, and the sequence numbers its chunks are missing. */
interface SessionTimeline {
  items: TimelineItem[];
  missing: Array<{ fromSeq: number; toSeq: number }>;
}

/**
 * Reads every chunk of the session in seq order (with {@link READ_AHEAD} blobs in flight) into a
 * timeline. Sequence numbers never received are listed in `missing`.
 */
async function readSessionTimeline(
  stores: AnalysisStores,
  log: ChunkReadLog,
  project: AnalysisProject,
  session: Pick<Session, 'id'>,
  options: { locators?: boolean } = {},
): Promise<SessionTimeline> {
  const chunks = await listChunks(stores.database, project.id, session.id);
  const builder = createTimelineBuilder({
    routePatterns: readSettings(project.settings).insights.routePatterns,
    locators: options.locators === true,
  });
  const reads = new Map<number, Promise<Uint8Array>>();
  const read = (position: number) => {
    const chunk = chunks[position];
    if (chunk !== undefined && !reads.has(position))
      reads.set(position, readChunkBytes(stores, log, project, chunk));
  };
  const missing: SessionTimeline['missing'] = [];
  let expected = 0;
  try {
    for (let position = 0; position < chunks.length; position += 1) {
      for (let ahead = position; ahead <= position + READ_AHEAD; ahead += 1) read(ahead);
      const chunk = chunks[position] as (typeof chunks)[number];
      const bytes = await (reads.get(position) as Promise<Uint8Array>);
      reads.delete(position);
      if (chunk.seq > expected) missing.push({ fromSeq: expected, toSeq: chunk.seq - 1 });
      expected = chunk.seq + 1;
      builder.push(chunk.seq, chunkEvents(bytes, chunk));
    }
  } finally {
    // A read that failed midway leaves the others settled, never unhandled.
    for (const pending of reads.values()) pending.catch(() => {});
  }
  return { items: builder.finish(), missing };
}

/** The session's calls, oldest first. */
async function findTranscriptCalls(
  database: Kysely<Database>,
  projectId: string,
  sessionId: string,
): Promise<TranscriptCall[]> {
  const rows = await database
    .selectFrom('calls')
    .select([
      'id',
      'pc',
      'started_at',
      'quality_score',
      'setup_ms',
      'relayed',
      'network_type',
      'protocol',
      'failed_to_connect',
      'failure_reason',
      'duration_ms',
    ])
    .where('project_id', '=', projectId)
    .where('session_id', '=', sessionId)
    .orderBy('started_at')
    .orderBy('id')
    .execute();
  return rows.map((row) => ({
    id: row.id,
    pc: row.pc,
    startedAt: new Date(row.started_at).getTime(),
    qualityScore: row.quality_score,
    setupMs: row.setup_ms,
    relayed: row.relayed,
    networkType: row.network_type,
    protocol: row.protocol,
    failedToConnect: row.failed_to_connect,
    failureReason: row.failure_reason,
    durationMs: row.duration_ms === null ? null : Number(row.duration_ms),
  }));
}

/** The session's detector findings, in time order. */
async function findTranscriptFindings(
  database: Kysely<Database>,
  projectId: string,
  sessionId: string,
): Promise<TranscriptFinding[]> {
  const rows = await database
    .selectFrom('call_findings')
    .select(['pc', 'kind', 'severity', 't', 'track', 'call_id', 'evidence'])
    .where('project_id', '=', projectId)
    .where('session_id', '=', sessionId)
    .orderBy('t')
    .orderBy('pc')
    .orderBy('kind')
    .execute();
  return rows.map((row) => ({
    pc: row.pc,
    kind: row.kind,
    severity: row.severity,
    t: new Date(row.t).getTime(),
    track: row.track,
    callId: row.call_id,
    evidence: row.evidence,
  }));
}

function isFrame(value: unknown): value is TranscriptFrame {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The stored frames of the session's errors (symbolicated by processing where a map matched), by evidence id. */
async function findErrorFrames(
  database: Kysely<Database>,
  projectId: string,
  sessionId: string,
): Promise<Map<string, TranscriptFrame[]>> {
  const rows = await database
    .selectFrom('session_signals')
    .select(['seq', 'event_index', 'details'])
    .where('project_id', '=', projectId)
    .where('session_id', '=', sessionId)
    .where('kind', '=', 'error')
    .execute();
  const frames = new Map<string, TranscriptFrame[]>();
  for (const row of rows) {
    const stored = row.details.frames;
    if (!Array.isArray(stored) || !stored.some((frame) => isFrame(frame) && frame.mapped === true)) continue;
    frames.set(
      `${row.seq}.${row.event_index}`,
      stored.filter(isFrame).map((frame) => ({
        ...(typeof frame.function === 'string' ? { function: frame.function } : {}),
        ...(typeof frame.file === 'string' ? { file: frame.file } : {}),
        ...(typeof frame.line === 'number' ? { line: frame.line } : {}),
        ...(typeof frame.column === 'number' ? { column: frame.column } : {}),
        ...(frame.mapped === true ? { mapped: true } : {}),
      })),
    );
  }
  return frames;
}

/** What a transcript is made of, read for one session; undefined when the project has no such session. */
export async function readTranscriptSources(
  stores: AnalysisStores,
  log: ChunkReadLog,
  project: AnalysisProject,
  sessionId: string,
): Promise<TranscriptSources | undefined> {
  const session = await findSession(stores.database, project.id, sessionId);
  if (session === undefined) return undefined;
  const [timeline, calls, findings, errorFrames] = await Promise.all([
    readSessionTimeline(stores, log, project, session),
    findTranscriptCalls(stores.database, project.id, sessionId),
    findTranscriptFindings(stores.database, project.id, sessionId),
    findErrorFrames(stores.database, project.id, sessionId),
  ]);
  return {
    session: {
      id: session.id,
      startedAt: new Date(session.started_at).getTime(),
      durationMs: Number(session.duration_ms),
      url: session.url,
      browserName: session.browser_name,
      browserVersion: session.browser_version,
      osName: session.os_name,
      osVersion: session.os_version,
      device: session.device,
      viewportWidth: session.viewport_width,
      viewportHeight: session.viewport_height,
      release: session.release,
      environment: session.environment,
      userId: session.user_id,
      recordingMode: session.recording_mode,
    },
    items: timeline.items,
    errorFrames,
    calls,
    findings,
    missing: timeline.missing,
  };
}

/**
 * The session's transcript, or undefined when the project has no such session.
 *
 * @example
 * ```ts
 * const transcript = await readTranscript(fastify, request.log, request.auth.project, 'ses_01J…');
 * ```
 */
export async function readTranscript(
  stores: AnalysisStores,
  log: ChunkReadLog,
  project: AnalysisProject,
  sessionId: string,
): Promise<Transcript | undefined> {
  const sources = await readTranscriptSources(stores, log, project, sessionId);
  return sources === undefined ? undefined : buildTranscript(sources);
}

/**
 * The session's reproduction (steps and a Playwright script), or undefined when the project has no
 * such session.
 */
export async function readReproduction(
  stores: AnalysisStores,
  log: ChunkReadLog,
  project: AnalysisProject,
  sessionId: string,
): Promise<Reproduction | undefined> {
  const session = await findSession(stores.database, project.id, sessionId);
  if (session === undefined) return undefined;
  const timeline = await readSessionTimeline(stores, log, project, session, { locators: true });
  return buildReproduction({
    session: {
      id: session.id,
      startedAt: new Date(session.started_at).getTime(),
      url: session.url,
      viewportWidth: session.viewport_width,
      viewportHeight: session.viewport_height,
      browserName: session.browser_name,
    },
    items: timeline.items,
  });
}
