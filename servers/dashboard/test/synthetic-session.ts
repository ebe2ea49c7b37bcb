import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';

// A long session made cheaply, for the lazy-loading test and the first-frame bench: the protocol
// fixture's recorded page (its rrweb Meta and FullSnapshot), a chunk every 5 s, a checkout every
// 30 s (Meta + FullSnapshot, as the SDK's checkoutEveryNms does), mouse moves in between.

// biome-ignore lint/suspicious/noExplicitAny: JSON of the fixture
type Json = any;

export const CHUNK_MS = 5_000;
export const CHECKOUT_MS = 30_000;
const MOVES_PER_CHUNK = 10;

const require = createRequire(import.meta.url);
const fixture = JSON.parse(
  await readFile(require.resolve('@svc/protocol/fixtures/valid/Chunk/recording-seq-0.json'), 'utf8'),
) as Json;
const meta = fixture.events.find((event: Json) => event.type === 'rrweb' && event.data.type === 4).data;
const full = fixture.events.find((event: Json) => event.type === 'rrweb' && event.data.type === 2).data;

const rrweb = (t: number, data: Json) => ({ t, type: 'rrweb', data: { ...data, timestamp: t } });

/** The chunks (JSON, as the SDK sends them) of a session of `durationMs` starting at `start`. */
export function* syntheticChunks(sessionId: string, start: number, durationMs: number): Generator<Json> {
  const count = Math.ceil(durationMs / CHUNK_MS);
  for (let seq = 0; seq < count; seq++) {
    const from = start + seq * CHUNK_MS;
    const events: Json[] = [];
    if (seq === 0) events.push({ t: from, type: 'nav', url: 'https://app.example.com/calls/42' });
    if ((seq * CHUNK_MS) % CHECKOUT_MS === 0) events.push(rrweb(from + 1, meta), rrweb(from + 2, full));
    for (let move = 0; move < MOVES_PER_CHUNK; move++) {
      const t = from + 10 + move * (CHUNK_MS / MOVES_PER_CHUNK);
      events.push(
        rrweb(t, {
          type: 3,
          data: {
            source: 1,
            positions: [{ x: (move * 37) % 1200, y: (seq * 13) % 700, id: 1, timeOffset: 0 }],
          },
        }),
      );
    }
    yield {
      v: 1,
      sessionId,
      visitId: fixture.visitId,
      seq,
      sentAt: from + CHUNK_MS,
      ...(seq === 0 ? { meta: { ...fixture.meta, startedAt: start, user: undefined } } : {}),
      events,
    };
  }
}
