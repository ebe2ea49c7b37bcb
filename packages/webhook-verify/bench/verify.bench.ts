/**
 * `pnpm bench`: verifications per second of one 2 KB webhook, for this package's Node build
 * (node:crypto) and WebCrypto build, next to baselines measured in the same run: Stripe's
 * `constructEvent` (its default Node crypto provider) and the `standardwebhooks` package's
 * `Webhook#verify`. Every task verifies the signature and parses the JSON. Prints ratios
 * against Stripe; never gates on absolute times.
 */
import { signWebhook, verifyWebhook } from '@svc/webhook-verify';
import { Webhook } from 'standardwebhooks';
import Stripe from 'stripe';
import { Bench } from 'tinybench';
import * as webBuild from '../src/web.ts';

const secret = 'whsec_benchSecret0123456789abcdefghijklmnop';
const event = {
  id: 'evt_01KAJBCH80GF0BDZMHRXCWSWV9',
  type: 'cluster.created',
  version: '2026-11-01',
  createdAt: '2025-11-21T04:40:12.345Z',
  orgId: 'org_01KAJBCH808WMW5DRXRGE3RMW4',
  projectId: 'proj_01KAJBCH807W2TEEGMVMRKKEVW',
  data: {
    title: 'Video freezes on /calls/:id',
    summary: '',
    severity: 'high',
    counts: { sessions: 4, users: 3 },
    route: '/calls/:id',
    release: 'web@2025.11.3',
    links: { replay: 'https://app.example.com/sessions/ses_01KAJBCH80XTQ0YDPAV81S476S?t=4700' },
    cluster: {
      id: 'cl_01KAJBCH80HJQR5CXGZJ7BYSNX',
      kind: 'webrtc_freeze',
      title: 'Video freezes',
      count24h: 4,
    },
  },
};
const base = JSON.stringify(event).length;
event.data.summary = 'Inbound video froze for 3.1 s in 4 sessions. '.repeat(60).slice(0, 2048 - base);
const body = JSON.stringify(event);
const bodyBuffer = Buffer.from(body);
if (bodyBuffer.length !== 2048) throw new Error(`body is ${bodyBuffer.length} bytes, expected 2048`);

const header = await signWebhook(body, secret);
const stripe = new Stripe('sk_test_bench');
const standardSecret = Buffer.from(secret).toString('base64');
const standard = new Webhook(standardSecret);
const standardHeaders = {
  'webhook-id': 'msg_bench',
  'webhook-timestamp': String(Math.floor(Date.now() / 1000)),
  'webhook-signature': standard.sign('msg_bench', new Date(), body),
};

// Every contender must accept the delivery before it is timed.
await verifyWebhook(bodyBuffer, header, secret);
await webBuild.verifyWebhook(bodyBuffer, header, secret);
stripe.webhooks.constructEvent(bodyBuffer, header, secret);
standard.verify(body, standardHeaders);

let sink = 0;
const tasks: Record<string, () => unknown> = {
  'stripe constructEvent (baseline)': () => {
    sink += (stripe.webhooks.constructEvent(bodyBuffer, header, secret) as { id: string }).id.length;
  },
  '@svc/webhook-verify node build': async () => {
    sink += (await verifyWebhook(bodyBuffer, header, secret)).id.length;
  },
  '@svc/webhook-verify web build (WebCrypto)': async () => {
    sink += (await webBuild.verifyWebhook(bodyBuffer, header, secret)).id.length;
  },
  'standardwebhooks Webhook#verify': () => {
    sink += (standard.verify(body, standardHeaders) as { id: string }).id.length;
  },
};
const names = Object.keys(tasks);
const baseline = 'stripe constructEvent (baseline)';

// Several short rounds, each running every task in a rotated order, so that a slow patch of a
// shared CPU lands on all contenders alike; the medians over the rounds are reported.
const rounds = 7;
const rates: Record<string, number[]> = Object.fromEntries(names.map((name) => [name, []]));
const ratios: Record<string, number[]> = Object.fromEntries(names.map((name) => [name, []]));
for (let round = 0; round < rounds; round++) {
  const bench = new Bench({ time: 400, warmupTime: 100 });
  const order = names.map((_, index) => names[(index + round) % names.length] as string);
  for (const name of order) bench.add(name, tasks[name] as () => unknown);
  await bench.run();
  const rate = (name: string) => {
    const result = bench.getTask(name)?.result;
    if (result === undefined || result.state !== 'completed') throw new Error(`${name}: ${result?.state}`);
    return result.throughput.mean;
  };
  for (const name of names) {
    rates[name]?.push(rate(name));
    ratios[name]?.push(rate(name) / rate(baseline));
  }
}

const median = (values: number[]) => {
  const sorted = [...values].sort((left, right) => left - right);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
};
const format = (value: number) => Math.round(value).toLocaleString('en-US');
console.log(
  `webhook verification, 2 KB body (${bodyBuffer.length} bytes), signature + JSON.parse; node ${process.version}`,
);
console.log(`median of ${rounds} interleaved rounds:`);
console.table(
  names.map((name) => ({
    task: name,
    'verifications/s': format(median(rates[name] ?? [])),
    'vs Stripe': `${median(ratios[name] ?? []).toFixed(2)}x`,
    'vs Stripe (min..max over rounds)': `${Math.min(...(ratios[name] ?? [])).toFixed(2)}..${Math.max(...(ratios[name] ?? [])).toFixed(2)}x`,
  })),
);
const nodeRatio = median(ratios['@svc/webhook-verify node build'] ?? []);
console.log(
  `target (node build >= Stripe): ${nodeRatio >= 1 ? 'met' : 'NOT met'} (median ${nodeRatio.toFixed(2)}x)`,
);
if (sink === Number.MIN_VALUE) console.log(sink);
