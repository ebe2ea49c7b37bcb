import type { BlobStore } from '../../platform/blob-store/index.ts';
import type { MasterKey } from '../../platform/crypto/index.ts';
import type { Chunk } from '../../platform/database/tables/chunks.table.ts';
import type { Project } from '../../platform/database/tables/projects.table.ts';
import { projectDataKey } from '../projects/index.ts';
import { openChunk } from './chunk-storage.ts';

const marker = Symbol.for('@svc/api.ChunkReadError');

/**
 * A chunk that is indexed but cannot be read back: its blob is gone, or does not open. No route
 * answers it: the error handler masks it as a 500.
 *
 * @example
 * ```ts
 * throw new ChunkReadError({ message: `Chunk ${sessionId}/${seq} is not JSON`, cause: error });
 * ```
 */
export class ChunkReadError extends Error {
  /** Marks instances for {@link ChunkReadError.isInstance}, across copies of the module. */
  readonly [marker] = true;

  constructor({ message, cause }: { message: string; cause?: unknown }) {
    super(message, cause === undefined ? undefined : { cause });
    this.name = 'ChunkReadError';
  }

  /** Whether `value` is a ChunkReadError (also one made by another copy of this module). */
  static isInstance(value: unknown): value is ChunkReadError {
    return typeof value === 'object' && value !== null && (value as { [marker]?: unknown })[marker] === true;
  }
}

/** Where stored chunks are read from: the blob store and the master key (a Fastify instance is one). */
export interface ChunkStores {
  blobStore: BlobStore;
  masterKey: MasterKey;
}

/** Where a chunk that cannot be read is reported (a pino or Fastify logger is one). */
export interface ChunkReadLog {
  error(details: object, message: string): void;
}

/**
 * The chunk's JSON bytes as stored (as the SDK sent them, unless ingest dropped or redacted
 * something: then re-encoded without it): the blob at the row's `blob_key`,
 * opened with the project's data key. A missing or unopenable blob is logged with its place and
 * thrown as a {@link ChunkReadError}, which the error handler answers as a masked 500.
 */
export async function readChunkBytes(
  stores: ChunkStores,
  log: ChunkReadLog,
  project: Pick<Project, 'id' | 'wrapped_data_key'>,
  chunk: Pick<Chunk, 'session_id' | 'seq' | 'blob_key'>,
): Promise<Uint8Array> {
  const place = { projectId: project.id, sessionId: chunk.session_id, seq: chunk.seq };
  const sealed = await stores.blobStore.get(chunk.blob_key);
  if (sealed === null) {
    log.error({ ...place, blobKey: chunk.blob_key }, 'chunk blob is missing');
    throw new ChunkReadError({ message: `The blob of chunk ${chunk.session_id}/${chunk.seq} is missing` });
  }
  try {
    return await openChunk(projectDataKey(stores.masterKey, project), sealed, place);
  } catch (error) {
    log.error({ ...place, blobKey: chunk.blob_key, err: error }, 'chunk blob does not open');
    throw new ChunkReadError({
      message: `The blob of chunk ${chunk.session_id}/${chunk.seq} does not open`,
      cause: error,
    });
  }
}

/** The `events` array of a chunk's JSON (a stored chunk always has one: ingest validated it). */
export function chunkEvents(bytes: Uint8Array, chunk: Pick<Chunk, 'session_id' | 'seq'>): unknown[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8'));
  } catch (error) {
    throw new ChunkReadError({ message: `Chunk ${chunk.session_id}/${chunk.seq} is not JSON`, cause: error });
  }
  const events = (parsed as { events?: unknown } | null)?.events;
  if (!Array.isArray(events))
    throw new ChunkReadError({ message: `Chunk ${chunk.session_id}/${chunk.seq} has no events` });
  return events;
}
