/**
 * `pnpm bench`, webhook deliveries, on the embedded store (PGlite) and on PostgreSQL. The servers
 * run as their own processes on 127.0.0.1; the receiver (examples/webhook-receiver, verifying
 * every signature with @svc/webhook-verify) runs here.
 *
 * 1. Throughput: a server with its delivery worker off queues BENCH_DELIVERIES test
 *    notifications (POST /v1/notifications/channels/{id}/test); a fresh server with the worker on
 *    then drains the outbox. Deliveries per second, from that server answering /readyz to the last
 *    verified delivery, next to the baseline: this process signing and POSTing the same envelope
 *    to the same receiver (`signWebhook` + `postWebhook`, as many at once as the worker sends),
 *    with no database. The ratio is what the outbox costs.
 * 2. Latency from finding to delivery: one session at a time, a call that never connects is sent
 *    through POST /v1/ingest; the processing job finds `webrtc_connect_failure`, the cluster
 *    reopens (the bench resolves it after each round), the rule writes the outbox row, and the
 *    delivery worker sends it. Time from the ingest answer to the verified webhook: p50 and p95,
 *    next to one signed POST (the baseline's p50).
 *
 * Prints ratios against baselines measured in the same run; never gates on absolute times.
 * Settings: BENCH_DELIVERIES (default 2000), BENCH_DELIVERY_ROUNDS (latency rounds, default 30),
 * BENCH_ONLY (comma list of embedded, postgres), SVC_BENCH_DATABASE_URL (use that PostgreSQL).
 */

import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startNodeReceiver, type WebhookReceiver } from '@example/webhook-receiver';
import { signWebhook } from '@svc/webhook-verify';
import { postWebhook } from '../src/modules/notifications/webhook-sender.ts';
import { createDestinationPolicy, parseAllowedHosts } from '../src/platform/http/destination-policy.ts';
import { runConcurrently } from '../src/platform/jobs/polling-loop.ts';
import { callTimeline, chunkBytes, sessionMeta } from '../test/call-timelines.ts';
import { newSessionId } from '../test/ingest-helpers.ts';
import { apiRequest as api } from '../test/process-helpers.ts';
import { percentile } from './load.ts';
import { type BenchPostgres, startBenchPostgres } from './postgres.ts';
import { createBenchProcesses, tailOf } from './processes.ts';

const DELIVERIES = Number(process.env.BENCH_DELIVERIES ?? 2_000);
const ROUNDS = Number(process.env.BENCH_DELIVERY_ROUNDS ?? 30);
const STORES = (process.env.BENCH_ONLY ?? 'embedded,postgres').split(',');
/** Deliveries the worker claims and sends at once (its default batch). */
const CONCURRENCY = 16;
const T0 = Date.UTC(2026, 10, 20, 10, 0, 0);

interface Credentials {
  projectKey: string;
  apiToken: string;
}

async function until(check: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!check()) {
    if (performance.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/** Sign + POST of one envelope to the receiver, `count` times, `CONCURRENCY` at once: per second and per-request ms. */
async function baseline(receiver: WebhookReceiver, secret: string, count: number) {
  const body = JSON.stringify({
    id: 'evt_01JD2S5V8Q8C4Y3K2W9T7N6M5H',
    type: 'notification.test',
    version: '2026-11-01',
    createdAt: new Date().toISOString(),
    orgId: 'org_01JD2S5V8Q8C4Y3K2W9T7N6M5H',
    projectId: 'proj_01JD2S5V8Q8C4Y3K2W9T7N6M5H',
    data: { title: 'Test notification', summary: 'A test.', severity: 'info', counts: {}, links: {} },
  });
  const policy = createDestinationPolicy(parseAllowedHosts('127.0.0.1').allowed);
  const latencies: number[] = [];
  const before = receiver.deliveries.length;
  const started = performance.now();
  await runConcurrently(
    Array.from({ length: count }, (_, index) => index),
    CONCURRENCY,
    async (index) => {
      const sent = performance.now();
      const result = await postWebhook({
        url: receiver.url,
        body,
        headers: {
          'Content-Type': 'application/json',
          'X-Service-Signature': await signWebhook(body, secret),
          'X-Service-Event-Id': 'evt_01JD2S5V8Q8C4Y3K2W9T7N6M5H',
          'X-Service-Delivery-Id': `dlv_baseline_${index}`,
          'X-Service-Attempt': '1',
        },
        timeoutMs: 10_000,
        policy,
      });
      if (result.outcome !== 'delivered') throw new Error(`baseline POST failed: ${result.error}`);
      latencies.push(performance.now() - sent);
    },
  );
  const seconds = (performance.now() - started) / 1000;
  if (receiver.deliveries.length - before !== count) throw new Error('the receiver missed baseline requests');
  latencies.sort((a, b) => a - b);
  return { perSecond: count / seconds, p50: percentile(latencies, 0.5) };
}

async function benchStore(store: string, postgres: BenchPostgres | undefined): Promise<string[]> {
  const work = await mkdtemp(join(tmpdir(), `svc-bench-deliveries-${store}-`));
  const processes = createBenchProcesses(work);
  const lines: string[] = [];
  const receivers: WebhookReceiver[] = [];
  try {
    const environment: Record<string, string> = {
      SVC_DATA_DIR: join(work, 'data'),
      SVC_WEBHOOK_ALLOWED_HOSTS: '127.0.0.1',
      SVC_LOG_LEVEL: 'warn',
      ...(postgres === undefined
        ? {}
        : { DATABASE_URL: postgres.url, SVC_MASTER_KEY: randomBytes(32).toString('base64') }),
    };
    const cli = processes.start('create-project', 'src/cli.ts', {
      arguments: ['create-project', '--name', 'bench', '--json'],
      environment,
      logFile: join(work, 'create-project.log'),
    });
    const code = await cli.exited;
    if (code !== '0') throw new Error(`create-project failed (${code}):\n${tailOf(cli)}`);
    const credentials = JSON.parse(tailOf(cli, 1)) as Credentials;
    // Queue with the worker off.
    const queueing = await processes.startApi(`${store}-queue`, {
      ...environment,
      SVC_DELIVERY_WORKER: 'false',
    });
    const token = credentials.apiToken;
    const channel = await api(`${queueing.url}/v1/notifications/channels`, token, 'POST', {
      type: 'webhook',
      name: 'bench',
      url: 'http://127.0.0.1:9/',
    });
    const receiver = await startNodeReceiver({ secrets: channel.secret });
    receivers.push(receiver);
    await api(`${queueing.url}/v1/notifications/channels/${channel.channel.id}`, token, 'PATCH', {
      url: receiver.url,
    });
    const base = await baseline(receiver, channel.secret, DELIVERIES);
    await runConcurrently(
      Array.from({ length: DELIVERIES }, (_, index) => index),
      16,
      async () => {
        await api(`${queueing.url}/v1/notifications/channels/${channel.channel.id}/test`, token, 'POST');
      },
    );
    await processes.stop(queueing.child);

    // Drain with the worker on.
    const before = receiver.deliveries.length;
    const draining = await processes.startApi(`${store}-deliver`, environment);
    const started = performance.now();
    await until(() => receiver.deliveries.length - before >= DELIVERIES, 600_000, 'the outbox to drain');
    const seconds = (performance.now() - started) / 1000;
    const perSecond = DELIVERIES / seconds;
    if (receiver.rejected.length > 0)
      throw new Error(`${receiver.rejected.length} deliveries failed verification`);
    lines.push(
      `| ${store} | ${Math.round(perSecond)} deliveries/s | ${Math.round(base.perSecond)}/s | ${(perSecond / base.perSecond).toFixed(2)}x |`,
    );

    // Latency from a finding to its webhook.
    await api(`${draining.url}/v1/notifications/rules`, token, 'POST', {
      name: 'failures',
      channelIds: [channel.channel.id],
      throttleMinutes: 0,
      source: {
        type: 'cluster',
        events: ['cluster.created', 'cluster.reopened'],
        kinds: ['webrtc_connect_failure'],
      },
    });
    const latencies: number[] = [];
    for (let round = 0; round < ROUNDS; round += 1) {
      const sessionId = newSessionId();
      const call = callTimeline({ start: T0 + 1_000, setupMs: null, fail: true, candidateError: 701 });
      const body = chunkBytes({
        sessionId,
        seq: 0,
        sentAt: call.end + 100,
        meta: sessionMeta(T0),
        events: call.items,
      });
      const count = receiver.deliveries.length;
      const response = await fetch(`${draining.url}/v1/ingest`, {
        method: 'POST',
        headers: {
          'x-service-project-key': credentials.projectKey,
          'x-service-encoding': 'json',
          'content-type': 'application/json',
        },
        body,
      });
      if (response.status !== 200) throw new Error(`ingest: ${response.status} ${await response.text()}`);
      const acknowledged = performance.now();
      await until(() => receiver.deliveries.length > count, 30_000, 'the webhook of a finding');
      latencies.push(performance.now() - acknowledged);
      const event = receiver.deliveries.at(-1)?.event as { data: { cluster: { id: string } } };
      await api(`${draining.url}/v1/issues/${event.data.cluster.id}`, token, 'PATCH', { status: 'resolved' });
    }
    latencies.sort((a, b) => a - b);
    lines.push(
      `| ${store} | finding → webhook p50 ${percentile(latencies, 0.5).toFixed(1)} ms, p95 ${percentile(latencies, 0.95).toFixed(1)} ms | one signed POST p50 ${base.p50.toFixed(1)} ms | ${(percentile(latencies, 0.5) / base.p50).toFixed(1)}x |`,
    );
    await processes.stop(draining.child);
    return lines;
  } finally {
    for (const receiver of receivers) await receiver.close();
    await processes.stopAll();
    await rm(work, { recursive: true, force: true });
  }
}

const results: string[] = [];
for (const store of STORES) {
  const postgres = store === 'postgres' ? await startBenchPostgres() : undefined;
  try {
    console.log(`deliveries on ${store}: ${DELIVERIES} queued, ${ROUNDS} latency rounds`);
    results.push(...(await benchStore(store, postgres)));
  } finally {
    if (postgres?.started) await postgres.stop();
  }
}
console.log('\n| store | measured | baseline (same run) | ratio |');
console.log('|---|---|---|---|');
for (const line of results) console.log(line);
