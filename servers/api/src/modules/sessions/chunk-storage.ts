import { promisify } from 'node:util';
import { deflate, inflate } from 'node:zlib';
import { type DataKey, openBlob, sealBlob } from '../../platform/crypto/index.ts';
import { randomBytesFromPool } from '../../platform/crypto/random-pool.ts';

const deflateAsync = promisify(deflate);
const inflateAsync = promisify(inflate);

/**
 * Where one attempt at storing a chunk puts its blob. Every part is an id the server validated
 * (`proj_…`, `ses_…`, an integer seq) or a random attempt id from {@link createChunkAttemptId},
 * so keys never carry user-controlled path syntax.
 *
 * Each attempt writes its own key: two requests racing with the same `(session, seq)` can never
 * overwrite each other's blob, and the index row (`chunks.blob_key`) names the one that won.
 * Readers always take the key from the row, never rebuild it.
 *
 * @example
 * ```ts
 * chunkBlobKey('proj_01J…', 'ses_01J…', 3, 'a1b2c3d4e5f60718');
 * // 'projects/proj_01J…/sessions/ses_01J…/0000000003.a1b2c3d4e5f60718.chunk'
 * ```
 */
export function chunkBlobKey(projectId: string, sessionId: string, seq: number, attempt: string): string {
  if (!/^[0-9a-f]{16,64}$/.test(attempt))
    throw new TypeError('chunkBlobKey: `attempt` must be lowercase hex');
  return `projects/${projectId}/sessions/${sessionId}/${String(seq).padStart(10, '0')}.${attempt}.chunk`;
}

/** A fresh random attempt id for {@link chunkBlobKey} (64 bits, lowercase hex). */
export function createChunkAttemptId(): string {
  return randomBytesFromPool(8).toString('hex');
}

/** Binds a sealed chunk to its place: a blob copied to another session or seq does not open. */
function chunkAssociatedData(projectId: string, sessionId: string, seq: number): string {
  return `svc:chunk:v1:${projectId}/${sessionId}/${seq}`;
}

/**
 * What is stored for a chunk: a zlib stream of the chunk's JSON bytes — exactly as the client sent
 * them, or re-encoded without what ingest dropped or redacted — sealed with the project's data
 * key (AES-256-GCM) and bound to `(project, session, seq)`. A `json+deflate` body kept as sent is
 * that stream already (`deflated`, verified to inflate to `json`), so it is sealed as sent
 * instead of being compressed a second time; other JSON is deflated here.
 */
export async function sealChunk(
  dataKey: DataKey,
  content: { json: Uint8Array; deflated?: Uint8Array | undefined },
  place: { projectId: string; sessionId: string; seq: number },
): Promise<Uint8Array> {
  const compressed = content.deflated ?? (await deflateAsync(content.json));
  return sealBlob(dataKey, compressed, chunkAssociatedData(place.projectId, place.sessionId, place.seq));
}

/** The chunk's JSON bytes as stored (see {@link sealChunk}). Throws on tampering. */
export async function openChunk(
  dataKey: DataKey,
  sealed: Uint8Array,
  place: { projectId: string; sessionId: string; seq: number },
): Promise<Uint8Array> {
  const compressed = openBlob(
    dataKey,
    sealed,
    chunkAssociatedData(place.projectId, place.sessionId, place.seq),
  );
  return new Uint8Array(await inflateAsync(compressed));
}
