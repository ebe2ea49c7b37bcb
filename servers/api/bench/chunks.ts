import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { deflateSync } from 'node:zlib';
import { ulid } from 'ulid';

// Request bodies for POST /v1/ingest: the protocol's recording fixtures, json+deflate, each with
// its own (sessionId, seq), so every acknowledgement is a real durable write (never a duplicate).
// A session is CHUNKS_PER_SESSION chunks: seq 0 (the fixture with `meta`, ~12 KB of JSON) and
// then seq 1.. (the later-chunk fixture, ~2 KB), like an SDK's upload stream.

const require = createRequire(import.meta.url);
const CHUNKS_PER_SESSION = 10;

function fixture(name: string): Record<string, unknown> {
  return JSON.parse(
    readFileSync(require.resolve(`@svc/protocol/fixtures/valid/Chunk/${name}.json`), 'utf8'),
  ) as Record<string, unknown>;
}

/**
 * A source of distinct ingest bodies: `next()` deflates a fresh chunk (tens of microseconds).
 * The baseline route gets the same bodies, so it writes the same bytes.
 *
 * @example
 * ```ts
 * const bodies = createChunkBodies();
 * const body = bodies.next();
 * ```
 */
export function createChunkBodies() {
  const first = fixture('recording-seq-0');
  const later = fixture('recording-seq-1');
  let sessionId = '';
  let visitId = '';
  let seq = CHUNKS_PER_SESSION;
  return {
    next(): Buffer {
      if (seq === CHUNKS_PER_SESSION) {
        sessionId = `ses_${ulid()}`;
        visitId = `vis_${ulid()}`;
        seq = 0;
      }
      const chunk = { ...(seq === 0 ? first : later), sessionId, visitId, seq };
      seq += 1;
      return deflateSync(JSON.stringify(chunk));
    },
  };
}
