/**
 * The cost of ingest's privacy re-check of call data (`recheckCallPrivacy`) on chunks as our SDK
 * sends them (nothing to remove: the common case), next to what ingest already pays for the same
 * chunk in the same run: `JSON.parse` of its bytes and `parseChunk`. CPU only, one thread, no
 * server. Run: `pnpm --filter @svc/api exec node --conditions=@svc/source bench/call-privacy.bench.ts`.
 */
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { parseChunk } from '@svc/protocol';
import { recheckCallPrivacy } from '../src/modules/sessions/call-privacy.ts';
import { callTimeline, chunkBytes, sessionMeta } from '../test/call-timelines.ts';

const require = createRequire(import.meta.url);
const ROUND_MS = Number(process.env.BENCH_PRIVACY_MS ?? 1500);

/** Calls `run` for about `ROUND_MS` (after a warm-up) and returns microseconds per call. */
function measure(run: () => unknown): number {
  const warmUntil = performance.now() + 300;
  while (performance.now() < warmUntil) run();
  let calls = 0;
  const start = performance.now();
  let now = start;
  while (now - start < ROUND_MS) {
    for (let index = 0; index < 20; index += 1) run();
    calls += 20;
    now = performance.now();
  }
  return ((now - start) * 1000) / calls;
}

const recorded = await readFile(require.resolve('@svc/protocol/fixtures/valid/Chunk/call.json'));
const recording = await readFile(require.resolve('@svc/protocol/fixtures/valid/Chunk/recording-seq-0.json'));
// A chunk of a 4-track call as the SDK uploads it while a problem lasts: 1 s samples, 60 of them.
const { items } = callTimeline({ start: 1763700000000, samples: 60, windowMs: 1000 });
const generated = chunkBytes({
  sessionId: 'ses_01KAJBCH80XTQ0YDPAV81S476S',
  seq: 0,
  sentAt: 1763700061000,
  meta: sessionMeta(1763700000000),
  events: items,
});

console.log('Privacy re-check of call data on chunks our SDK sends (nothing to remove)');
for (const [label, bytes] of [
  ['recorded Chromium calls (fixtures/valid/Chunk/call.json)', recorded],
  ['one 4-track call, 60 samples of 1 s', generated],
  ['a recording chunk without call items (fixtures/valid/Chunk/recording-seq-0.json)', recording],
] as const) {
  const text = bytes.toString('utf8');
  const value = JSON.parse(text) as { events: unknown[] };
  const parsed = parseChunk(value);
  if (!parsed.success) throw new Error(parsed.error.message);
  if (recheckCallPrivacy(value.events, { strict: false }).events !== value.events)
    throw new Error('the re-check changed an SDK chunk');
  const parseMicroseconds = measure(() => parseChunk(JSON.parse(text)));
  const checkMicroseconds = measure(() => recheckCallPrivacy(value.events, { strict: false }));
  console.log(
    `  ${label}: ${value.events.length} events, ${bytes.byteLength} bytes\n` +
      `    JSON.parse + parseChunk ${parseMicroseconds.toFixed(1)} µs, re-check ${checkMicroseconds.toFixed(1)} µs: ` +
      `${((checkMicroseconds / parseMicroseconds) * 100).toFixed(1)}% on top`,
  );
}
