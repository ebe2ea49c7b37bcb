import { createHash } from 'node:crypto';
import type { PassThrough, Readable } from 'node:stream';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { Kysely } from 'kysely';
import { ZipFile } from 'yazl';
import type { BlobStore } from '../../platform/blob-store/index.ts';
import type { MasterKey } from '../../platform/crypto/index.ts';
import type { Database } from '../../platform/database/schema.ts';
import type { DsarManifest, DsarRequest } from '../../platform/database/tables/dsar.table.ts';
import type { Project } from '../../platform/database/tables/projects.table.ts';
import { findCallDetail, toCallDetail } from '../calls/index.ts';
import { findProjectById } from '../projects/index.ts';
import {
  type ChunkReadLog,
  chunkEvents,
  listChunks,
  loadSessionDetail,
  readChunkBytes,
} from '../sessions/index.ts';
import { findSessionSignalsAfter } from './dsar-repository.ts';

// The archive of an access request (servers/api/README.md, Privacy requests): a zip built while
// it is sent, from the request's manifest and what the stores hold now. Nothing of it is written
// anywhere: each part is read (a chunk: fetched, decrypted, inflated), hashed and written into the
// zip before the next is read, so memory holds one part at a time and the response's backpressure
// paces the reads. `index.json`, the last entry, describes every part as it was sent (path, kind,
// project, session or call, byte size, SHA-256).

/** What the archive is read from. */
export interface DsarArchiveStores {
  database: Kysely<Database>;
  blobStore: BlobStore;
  masterKey: MasterKey;
  log: ChunkReadLog;
}

/** What a part of the archive holds. */
type DsarPartKind = 'session' | 'chunk' | 'events' | 'errors' | 'custom-events' | 'call';

/** One entry of `index.json`. */
interface DsarIndexPart {
  path: string;
  kind: DsarPartKind;
  projectId: string;
  sessionId?: string;
  callId?: string;
  /** A chunk's sequence number. */
  seq?: number;
  /** What the part holds, for a reader. */
  description: string;
  /** The part's size in bytes, uncompressed. */
  bytes: number;
  /** SHA-256 of those bytes, hex. */
  sha256: string;
}

/** The `index.json` of an archive. */
export interface DsarIndex {
  format: 'svc-dsar/1';
  request: {
    id: string;
    organizationId: string;
    subject: { userId?: string; email?: string };
    requestedAt: string;
    gatheredAt: string | null;
  };
  generatedAt: string;
  projects: Array<{ projectId: string; name: string }>;
  parts: DsarIndexPart[];
  /** Sessions and calls of the manifest that were deleted since it was gathered. */
  omitted: Array<{ kind: 'session' | 'call'; projectId: string; id: string }>;
}

/** Errors and custom events read from the database per page. */
const SIGNAL_PAGE = 500;

const DESCRIPTIONS: Record<DsarPartKind, string> = {
  session: 'The session: device, browser, pages, the user as identified, and its chunk manifest',
  chunk: 'One chunk of the recording, decrypted and inflated: the JSON the SDK sent',
  events: "Every event of the session's chunks, one JSON object a line: { seq, index, event }",
  errors: 'The errors of the session as indexed (message, name, stack), one JSON object a line',
  'custom-events': 'The custom events of the session as indexed (name, properties), one JSON object a line',
  call: 'A WebRTC call of the session: its scores, per-track metric series, event markers and findings',
};

const json = (value: unknown) => Buffer.from(`${JSON.stringify(value, null, 2)}\n`);
const jsonLine = (value: unknown) => Buffer.from(`${JSON.stringify(value)}\n`);

/**
 * The zip of `request` (a ready request, with its manifest), as a stream: parts are read while it
 * is consumed. A part that cannot be read (a chunk's blob missing) destroys the stream with the
 * error (logged by `stores.log` first); a consumer that goes away stops the reading.
 *
 * @example
 * ```ts
 * return reply.type('application/zip').send(createDsarArchive(stores, request, manifest));
 * ```
 */
export function createDsarArchive(
  stores: DsarArchiveStores,
  request: DsarRequest,
  manifest: DsarManifest,
  now: () => Date = () => new Date(),
): Readable {
  const zip = new ZipFile();
  const output = zip.outputStream as PassThrough;
  const mtime = request.ready_at ?? request.created_at;
  const parts: DsarIndexPart[] = [];
  let closed = false;
  /** Rejects once the reader has gone (or the archive has ended): no part is read after that. */
  const readerGone = new Promise<never>((_resolve, reject) => {
    output.once('close', () => {
      closed = true;
      reject(new Error('the archive was closed by its reader'));
    });
  });
  readerGone.catch(() => {});

  /** Writes one part, whose bytes `content` yields, and resolves once the zip has taken it all. */
  async function writePart(
    part: Omit<DsarIndexPart, 'bytes' | 'sha256' | 'description'>,
    content: () => AsyncIterable<Buffer>,
  ): Promise<void> {
    if (closed) throw new Error('the archive was closed by its reader');
    const hash = createHash('sha256');
    let bytes = 0;
    const tap = new Transform({
      transform(data: Buffer, _encoding, done) {
        hash.update(data);
        bytes += data.length;
        done(null, data);
      },
    });
    // The zip reads the part when its turn comes: at once, each part being added after the last
    // one was taken. The pipeline ends when the zip has read all of it.
    zip.addReadStreamLazy(part.path, { mtime, compress: true }, (callback) => callback(null, tap));
    const piped = pipeline(content(), tap);
    piped.catch(() => {});
    try {
      await Promise.race([piped, readerGone]);
    } catch (error) {
      tap.destroy();
      throw error;
    }
    parts.push({ ...part, description: DESCRIPTIONS[part.kind], bytes, sha256: hash.digest('hex') });
  }

  async function produce(): Promise<void> {
    const omitted: DsarIndex['omitted'] = [];
    const projects = new Map<string, Project | undefined>();
    const projectOf = async (projectId: string) => {
      if (!projects.has(projectId))
        projects.set(projectId, await findProjectById(stores.database, projectId));
      return projects.get(projectId);
    };
    for (const entry of manifest.sessions) {
      const project = await projectOf(entry.projectId);
      const detail =
        project === undefined ? undefined : await loadSessionDetail(stores.database, project.id, entry.id);
      if (project === undefined || detail === undefined) {
        omitted.push({ kind: 'session', projectId: entry.projectId, id: entry.id });
        continue;
      }
      const base = `projects/${project.id}/sessions/${entry.id}`;
      const place = { projectId: project.id, sessionId: entry.id };
      await writePart({ path: `${base}/session.json`, kind: 'session', ...place }, async function* () {
        yield json(detail);
      });
      const chunks = await listChunks(stores.database, project.id, entry.id);
      for (const chunk of chunks) {
        await writePart(
          { path: `${base}/chunks/${chunk.seq}.json`, kind: 'chunk', ...place, seq: chunk.seq },
          async function* () {
            yield Buffer.from(await readChunkBytes(stores, stores.log, project, chunk));
          },
        );
      }
      await writePart({ path: `${base}/events.jsonl`, kind: 'events', ...place }, async function* () {
        for (const chunk of chunks) {
          const events = chunkEvents(await readChunkBytes(stores, stores.log, project, chunk), chunk);
          yield Buffer.concat(events.map((event, index) => jsonLine({ seq: chunk.seq, index, event })));
        }
      });
      for (const [kind, signalKind] of [
        ['errors', 'error'],
        ['custom-events', 'custom'],
      ] as const) {
        await writePart({ path: `${base}/${kind}.jsonl`, kind, ...place }, async function* () {
          let after: { seq: number; index: number } | undefined;
          for (;;) {
            const page = await findSessionSignalsAfter(
              stores.database,
              { ...place, kind: signalKind },
              { after, limit: SIGNAL_PAGE },
            );
            if (page.length > 0)
              yield Buffer.concat(
                page.map((signal) =>
                  jsonLine({
                    seq: signal.seq,
                    index: signal.event_index,
                    t: signal.t.toISOString(),
                    name: signal.name,
                    message: signal.message,
                    severity: signal.severity,
                    details: signal.details,
                  }),
                ),
              );
            const last = page.at(-1);
            if (page.length < SIGNAL_PAGE || last === undefined) return;
            after = { seq: last.seq, index: last.event_index };
          }
        });
      }
    }
    for (const entry of manifest.calls) {
      const detail = await findCallDetail(stores.database, entry.projectId, entry.id);
      if (detail === undefined) {
        omitted.push({ kind: 'call', projectId: entry.projectId, id: entry.id });
        continue;
      }
      await writePart(
        {
          path: `projects/${entry.projectId}/calls/${entry.id}.json`,
          kind: 'call',
          projectId: entry.projectId,
          sessionId: entry.sessionId,
          callId: entry.id,
        },
        async function* () {
          yield json(toCallDetail(detail));
        },
      );
    }
    const index: DsarIndex = {
      format: 'svc-dsar/1',
      request: {
        id: request.id,
        organizationId: request.organization_id,
        subject: {
          ...(request.subject_user_id === null ? {} : { userId: request.subject_user_id }),
          ...(request.subject_email === null ? {} : { email: request.subject_email }),
        },
        requestedAt: request.created_at.toISOString(),
        gatheredAt: request.ready_at?.toISOString() ?? null,
      },
      generatedAt: now().toISOString(),
      projects: manifest.projects.map((project) => ({ projectId: project.projectId, name: project.name })),
      parts,
      omitted,
    };
    zip.addBuffer(json(index), 'index.json', { mtime, compress: true });
    zip.end();
  }

  zip.on('error', (error: Error) => output.destroy(error));
  produce().catch((error: unknown) => {
    if (!closed) output.destroy(error as Error);
  });
  return output;
}
