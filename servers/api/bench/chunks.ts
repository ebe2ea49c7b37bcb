import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { deflateSync } from 'node:zlib';
import { ulid } from 'ulid';

// Request bodies for POST /v1/ingest: the protocol's recording fixtures, json+deflate, each with
// its own (sessionId, seq), so every acknowledgement is a real durable write (never a duplicate).
// A session is CHUNKS_PER_SESSION chunks: seq 0 (the fixture with `meta`, ~12 KB of JSON) and
// then seq 1.. (the later-chunk fixture, ~2 KB), like an SDK's upload stream. Like real SDKs,
// which keep one request in flight per session (PROTOCOL.md §1), consecutive bodies come from
// `concurrentSessions` different sessions in turn.

const require = createRequire(import.meta.url);
const CHUNKS_PER_SESSION = 10;

function fixture(name: string): Record<string, unknown> {
  return JSON.parse(
    readFileSync(require.resolve(`@svc/protocol/fixtures/valid/Chunk/${name}.json`), 'utf8'),
  ) as Record<string, unknown>;
}

/**
 * A source of distinct ingest bodies: `next()` deflates a fresh chunk (tens of microseconds).
 * The baseline route gets the same bodies, so it writes the same bytes. `concurrentSessions`
 * (default 16) sessions upload in turn, each with consecutive seqs.
 *
 * @example
 * ```ts
 * const bodies = createChunkBodies({ concurrentSessions: 16 });
 * const body = bodies.next();
 * ```
 */
export function createChunkBodies(options: { concurrentSessions?: number } = {}) {
  const first = fixture('recording-seq-0');
  const later = fixture('recording-seq-1');
  const sessions = Array.from({ length: Math.max(1, options.concurrentSessions ?? 16) }, () => ({
    sessionId: '',
    visitId: '',
    seq: CHUNKS_PER_SESSION,
  }));
  let turn = 0;
  return {
    next(): Buffer {
      const session = sessions[turn % sessions.length] as (typeof sessions)[number];
      turn += 1;
      if (session.seq === CHUNKS_PER_SESSION) {
        session.sessionId = `ses_${ulid()}`;
        session.visitId = `vis_${ulid()}`;
        session.seq = 0;
      }
      const { sessionId, visitId, seq } = session;
      const chunk = { ...(seq === 0 ? first : later), sessionId, visitId, seq };
      session.seq += 1;
      return deflateSync(JSON.stringify(chunk));
    },
  };
}
