import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyBaseLogger } from 'fastify';
import type { Kysely } from 'kysely';
import type { BlobStore } from '../blob-store/index.ts';
import { chunkBlobKey, createChunkAttemptId, projectDataKey, sealChunk } from '../chunks/chunk-storage.ts';
import type { MasterKey } from '../crypto/index.ts';
import { isUniqueViolation } from '../database/errors.ts';
import type { Database } from '../database/schema.ts';
import type { Project } from '../database/tables/projects.table.ts';
import { findIndexedChunk, recordChunk } from '../repositories/ingest.ts';
import { summarizeChunk } from './chunk-summary.ts';
import type { DecodedChunk } from './decode-chunk.ts';

/** What {@link ingestChunk} needs from the process. */
export interface IngestDependencies {
  database: Kysely<Database>;
  blobStore: BlobStore;
  masterKey: MasterKey;
  log: FastifyBaseLogger;
}

/**
 * How a chunk was taken: `stored` (durable and indexed now), `duplicate` (the same bytes were
 * already stored: nothing changed) or `conflict` (this seq was already stored with other bytes:
 * nothing changed).
 */
export type IngestOutcome = { status: 'stored' | 'duplicate' | 'conflict'; seq: number };

function sameDigest(a: Uint8Array, b: Uint8Array): boolean {
  return a.byteLength === b.byteLength && timingSafeEqual(a, b);
}

/**
 * Stores one validated chunk durably, then indexes it (PROTOCOL.md §1), in this order:
 *
 * 1. content hash = SHA-256 of the chunk's JSON bytes;
 * 2. seal the bytes with the project's data key and `put` them under a key unique to this attempt
 *    (durable when it resolves), so a racing attempt can never overwrite the blob that wins;
 * 3. one transaction: session upsert with its aggregates, chunk row, signal rows;
 * 4. only then `stored`. When `(project, session, seq)` is already indexed — a retry, or another
 *    request that won a race — the chunk insert's unique violation rolls the transaction back;
 *    the request then answers `duplicate` (same hash) or `conflict` (another hash) from the
 *    indexed row and deletes its own blob (best effort: an orphan blob is never read). A chunk
 *    row therefore always points at a durable blob. There is no separate "already stored?"
 *    query first: retries are rare, and on the embedded store every query waits for PGlite's
 *    single connection.
 *
 * Throws on infrastructure failures (blob store, database): nothing is indexed then, and the
 * client retries the same bytes.
 *
 * @example
 * ```ts
 * const outcome = await ingestChunk({ database, blobStore, masterKey, log }, project, decoded);
 * if (outcome.status === 'conflict') throw invalid(`seq ${outcome.seq} was already received with different content`, 409);
 * ```
 */
export async function ingestChunk(
  dependencies: IngestDependencies,
  project: Pick<Project, 'id' | 'wrapped_data_key'>,
  decoded: DecodedChunk,
): Promise<IngestOutcome> {
  const { database, blobStore, masterKey, log } = dependencies;
  const { chunk } = decoded;
  const place = { projectId: project.id, sessionId: chunk.sessionId, seq: chunk.seq };
  const contentSha256 = createHash('sha256').update(decoded.json).digest();

  const answerFrom = (indexed: { contentSha256: Uint8Array }): IngestOutcome => ({
    status: sameDigest(indexed.contentSha256, contentSha256) ? 'duplicate' : 'conflict',
    seq: chunk.seq,
  });

  const sealed = await sealChunk(projectDataKey(masterKey, project), decoded.json, place);
  const blobKey = chunkBlobKey(project.id, chunk.sessionId, chunk.seq, createChunkAttemptId());
  await blobStore.put(blobKey, sealed);

  const summary = summarizeChunk(chunk, decoded.skipped);
  // Whether the transaction's work ran to its end: an error after that came from COMMIT itself,
  // and the commit may have happened, so the blob must stay.
  let indexed = false;
  try {
    await database.transaction().execute(async (transaction) => {
      await recordChunk(transaction, {
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
      indexed = true;
    });
  } catch (error) {
    if (indexed) throw error;
    const deleteOrphan = () =>
      blobStore.delete(blobKey).catch((deleteError: unknown) => {
        log.warn({ err: deleteError, blobKey }, 'could not delete the blob of a chunk that was not indexed');
      });
    if (!isUniqueViolation(error)) {
      await deleteOrphan();
      throw error;
    }
    // Another request indexed this seq first: answer from its row.
    await deleteOrphan();
    const winner = await findIndexedChunk(database, place);
    if (winner === undefined) throw error;
    return answerFrom(winner);
  }

  if (decoded.skipped.length > 0) {
    log.info(
      { sessionId: chunk.sessionId, seq: chunk.seq, skipped: decoded.skipped.slice(0, 20) },
      `skipped ${decoded.skipped.length} event(s) of unknown types`,
    );
  }
  return { status: 'stored', seq: chunk.seq };
}
