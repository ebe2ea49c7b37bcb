import { timingSafeEqual } from 'node:crypto';
import type { FastifyBaseLogger } from 'fastify';
import type { BlobStore } from '../../platform/blob-store/index.ts';
import type { MasterKey } from '../../platform/crypto/index.ts';
import type { Project } from '../../platform/database/tables/projects.table.ts';
import { projectDataKey } from '../projects/index.ts';
import type { ChunkIndexWriter } from './chunk-index-writer.ts';
import { chunkBlobKey, createChunkAttemptId, sealChunk } from './chunk-storage.ts';
import { summarizeChunk } from './chunk-summary.ts';
import type { DecodedChunk } from './decode-chunk.ts';
import type { IngestCounters } from './ingest-counters.ts';

/** What {@link ingestChunk} needs from the process. */
export interface IngestDependencies {
  blobStore: BlobStore;
  masterKey: MasterKey;
  /** The process's group-commit writer of chunk index rows. */
  chunkIndex: ChunkIndexWriter;
  /** What ingest dropped and redacted from the chunks it stored. */
  counters: IngestCounters;
  log: FastifyBaseLogger;
}

/**
 * How a chunk was taken: `stored` (durable and indexed now), `duplicate` (the same bytes were
 * already stored: nothing changed) or `conflict` (this seq was already stored with other bytes:
 * nothing changed).
 */
export type IngestOutcome = {
  status: 'stored' | 'duplicate' | 'conflict';
  seq: number;
  /** `call.*` items in the chunk: a call processing job was queued with it when it was stored. */
  callItemCount: number;
};

function sameDigest(a: Uint8Array, b: Uint8Array): boolean {
  return a.byteLength === b.byteLength && timingSafeEqual(a, b);
}

/**
 * Stores one validated chunk durably, then indexes it (PROTOCOL.md §1), in this order:
 *
 * 1. content hash = SHA-256 of the chunk's JSON bytes as sent (`decoded.contentSha256`; what is
 *    stored may be those bytes without what ingest dropped or redacted);
 * 2. seal the chunk with the project's data key and `put` it under a key unique to this attempt
 *    (durable when it resolves), so a racing attempt can never overwrite the blob that wins;
 * 3. index it: the session upsert with its aggregates, the chunk row and its signal rows, in one
 *    transaction shared with the chunks that arrived meanwhile (group commit, see
 *    {@link ChunkIndexWriter});
 * 4. only then `stored`. When `(project, session, seq)` was already indexed — a retry, or another
 *    request that won a race — nothing changes: the request answers `duplicate` (same hash) or
 *    `conflict` (another hash) from the indexed row and deletes its own blob (best effort: an
 *    orphan blob is never read). A chunk row therefore always points at a durable blob.
 *
 * Throws on infrastructure failures (blob store, database): the client retries the same bytes.
 * The blob is kept then, since a failed COMMIT may still have indexed it.
 *
 * @example
 * ```ts
 * const outcome = await ingestChunk({ blobStore, masterKey, chunkIndex, counters, log }, project, decoded);
 * if (outcome.status === 'conflict') throw invalid(`seq ${outcome.seq} was already received with different content`, 409);
 * ```
 */
export async function ingestChunk(
  dependencies: IngestDependencies,
  project: Pick<Project, 'id' | 'wrapped_data_key'>,
  decoded: DecodedChunk,
): Promise<IngestOutcome> {
  const { blobStore, masterKey, chunkIndex, counters, log } = dependencies;
  const { chunk, contentSha256 } = decoded;
  const place = { projectId: project.id, sessionId: chunk.sessionId, seq: chunk.seq };

  const sealed = await sealChunk(projectDataKey(masterKey, project), decoded, place);
  const blobKey = chunkBlobKey(project.id, chunk.sessionId, chunk.seq, createChunkAttemptId());
  // The key is this attempt's own and is indexed only once the put resolved: write it in place.
  await blobStore.put(blobKey, sealed, { writeOnce: true });

  const summary = summarizeChunk(chunk, decoded.skipped);
  const outcome = await chunkIndex.index({
    projectId: project.id,
    chunk,
    summary,
    blobKey,
    contentSha256,
    encoding: decoded.encoding,
    receivedBytes: decoded.receivedBytes,
    inflatedBytes: decoded.json.byteLength,
    storedBytes: sealed.byteLength,
  });

  // `exists` with our own blob: a retried batch whose first COMMIT did go through.
  if (outcome.status === 'exists' && outcome.indexed.blobKey !== blobKey) {
    await blobStore.delete(blobKey).catch((error: unknown) => {
      log.warn({ err: error, blobKey }, 'could not delete the blob of a chunk that was not indexed');
    });
    return {
      status: sameDigest(outcome.indexed.contentSha256, contentSha256) ? 'duplicate' : 'conflict',
      seq: chunk.seq,
      callItemCount: summary.callItemCount,
    };
  }

  if (decoded.skipped.length > 0) {
    log.info(
      { sessionId: chunk.sessionId, seq: chunk.seq, skipped: decoded.skipped.slice(0, 20) },
      `skipped ${decoded.skipped.length} event(s) of unknown types`,
    );
  }
  if (decoded.dropped.length > 0) {
    log.info(
      { sessionId: chunk.sessionId, seq: chunk.seq, dropped: decoded.dropped },
      `dropped ${decoded.dropped.length} empty or malformed optional meta field(s)`,
    );
  }
  if (decoded.redacted.length > 0) {
    const removed = decoded.redacted.reduce((total, { count }) => total + count, 0);
    log.warn(
      { sessionId: chunk.sessionId, seq: chunk.seq, redacted: decoded.redacted },
      `removed ${removed} value(s) of call data that the privacy rules forbid`,
    );
  }
  counters.count(decoded.dropped, decoded.redacted);
  return { status: 'stored', seq: chunk.seq, callItemCount: summary.callItemCount };
}
