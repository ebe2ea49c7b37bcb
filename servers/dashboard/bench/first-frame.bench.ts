/**
 * `pnpm bench` for the dashboard: time to the first replayed frame of a 1-minute session and of a
 * 2-hour one, and their ratio. The player fetches only the chunks around the playhead (from the
 * full snapshot before it, a few ahead), so the ratio should stay near 1.
 *
 * The real server (servers/api, embedded store, fresh data directory, in this process) serves the
 * built dashboard; the sessions are synthesized from the protocol's recorded fixture: a chunk
 * every 5 s, a checkout (rrweb Meta + FullSnapshot) every 30 s, mouse moves in between. Chromium
 * signs in with the first start's one-time link token, then opens each session page in turn, ROUNDS
 * times, alternating, and measures from navigation to the replayed iframe's body having content.
 * Prints medians and the ratio; never gates on absolute times. Settings: BENCH_ROUNDS (default 5).
 */

import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { deflateSync } from 'node:zlib';
import { startServer } from '@svc/api/src/server.ts';
import { CHROMIUM, CHROMIUM_ARGS } from '@svc-dev/chromium';
import { chromium } from 'playwright-core';
import { freePort } from '../../api/bench/processes.ts';
import { newSessionId } from '../../api/test/ingest-helpers.ts';
import { buildIfStale } from '../scripts/build-if-stale.ts';
import { syntheticChunks } from '../test/synthetic-session.ts';

const ROUNDS = Math.max(1, Number(process.env.BENCH_ROUNDS ?? 5));

const work = await mkdtemp(join(tmpdir(), 'svc-first-frame-'));
await buildIfStale();
const port = await freePort();
const server = await startServer(
  { PORT: String(port), HOST: '127.0.0.1', SVC_DATA_DIR: work, SVC_LOG_LEVEL: 'silent' },
  { output: () => {} },
);
const browser = await chromium.launch({ executablePath: CHROMIUM, args: [...CHROMIUM_ARGS] });
try {
  if (server.credentials === null || server.owner?.signInLink === undefined)
    throw new Error('expected a first start (credentials and a sign-in link)');
  const { projectKey } = server.credentials;

  async function ingest(label: string, durationMs: number): Promise<string> {
    const sessionId = newSessionId();
    const started = performance.now();
    let chunks = 0;
    for (const chunk of syntheticChunks(sessionId, Date.now() - durationMs - 60_000, durationMs)) {
      const answer = await server.fastify.inject({
        method: 'POST',
        url: '/v1/ingest',
        headers: { 'x-service-project-key': projectKey, 'x-service-encoding': 'json+deflate' },
        payload: deflateSync(Buffer.from(JSON.stringify(chunk))),
      });
      if (answer.statusCode !== 200) throw new Error(`ingest ${label} ${chunk.seq}: ${answer.body}`);
      chunks += 1;
    }
    console.log(
      `  ${label}: ${chunks} chunks ingested in ${((performance.now() - started) / 1000).toFixed(1)} s`,
    );
    return sessionId;
  }

  console.log('first frame of the replay: a 1-minute session vs a 2-hour one');
  const sessions = {
    '1 minute': await ingest('1 minute', 60_000),
    '2 hours': await ingest('2 hours', 2 * 3_600_000),
  };

  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  // The first start's one-time link, posted as its page would (the cookie lands in the context).
  const token = new URL(server.owner.signInLink).searchParams.get('token');
  const signIn = await context.request.post(`${server.url}/auth/magic-link`, {
    data: { token },
    headers: { origin: server.url },
  });
  if (!signIn.ok()) throw new Error(`signing in: ${signIn.status()} ${await signIn.text()}`);
  const page = await context.newPage();

  async function firstFrame(sessionId: string): Promise<number> {
    await page.goto('about:blank');
    const started = performance.now();
    await page.goto(`${server.url}/sessions/${sessionId}`);
    await page.waitForFunction(
      () => {
        const frame = document.querySelector<HTMLIFrameElement>('.player-screen iframe');
        return (frame?.contentDocument?.body?.childElementCount ?? 0) > 0;
      },
      undefined,
      { timeout: 60_000, polling: 10 },
    );
    return performance.now() - started;
  }

  const times: Record<string, number[]> = { '1 minute': [], '2 hours': [] };
  // One warm-up each (the browser's cache of the app's assets), then alternating rounds.
  for (const sessionId of Object.values(sessions)) await firstFrame(sessionId);
  for (let round = 0; round < ROUNDS; round++)
    for (const [label, sessionId] of Object.entries(sessions))
      times[label]?.push(await firstFrame(sessionId));

  const median = (values: number[]) => {
    const sorted = [...values].sort((left, right) => left - right);
    return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
  };
  const short = median(times['1 minute'] ?? []);
  const long = median(times['2 hours'] ?? []);
  for (const [label, values] of Object.entries(times))
    console.log(
      `  ${label}: median ${median(values).toFixed(0)} ms (${values.map((value) => value.toFixed(0)).join(', ')})`,
    );
  console.log(`  ratio 2 hours / 1 minute: ${(long / short).toFixed(2)}x`);
  await context.close();
} finally {
  await browser.close();
  await server.close();
  await rm(work, { recursive: true, force: true });
}
