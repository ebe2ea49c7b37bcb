// Usage: WEBHOOK_SECRET=whsec_... PORT=4000 pnpm --filter @example/webhook-receiver start
// Prints one JSON line per verified event on stdout (pipe it to jq); where it listens, rejected
// requests and shutdown go to stderr. WEBHOOK_SECRET may list two secrets, comma-separated,
// during a rotation. WEBHOOK_RECEIVER=fetch serves the Fetch-API adapter instead of node:http.
import { type ReceivedDelivery, startFetchReceiver, startNodeReceiver } from './index.ts';
import { receivedResponse } from './receiver.ts';

const secrets = (process.env.WEBHOOK_SECRET ?? '').split(',').filter((secret) => secret !== '');
const variant = process.env.WEBHOOK_RECEIVER ?? 'node';
const port = Number(process.env.PORT ?? 4000);
if (secrets.length === 0) {
  console.error(
    'Set WEBHOOK_SECRET to the whsec_… secret that POST /v1/notifications/channels returned when the channel was created.',
  );
  process.exit(1);
}
if (variant !== 'node' && variant !== 'fetch') {
  console.error(`WEBHOOK_RECEIVER is 'node' (default) or 'fetch', not '${variant}'.`);
  process.exit(1);
}
if (!Number.isInteger(port) || port < 0 || port > 65_535) {
  console.error(`PORT is a port number, not '${process.env.PORT}'.`);
  process.exit(1);
}

function summarize(delivery: ReceivedDelivery) {
  const { event } = delivery;
  return {
    id: event.id,
    type: event.type,
    title: event.data.title,
    severity: event.data.severity,
    attempt: delivery.attempt,
    duplicate: delivery.duplicate,
  };
}

const start = variant === 'fetch' ? startFetchReceiver : startNodeReceiver;
const receiver = await start({
  secrets,
  host: process.env.HOST ?? '127.0.0.1',
  port,
  respond: (delivery) => {
    console.log(JSON.stringify(summarize(delivery)));
    return receivedResponse;
  },
  onRejected: (request) => console.error(`rejected (${request.code}): ${request.message}`),
});
console.error(
  `Receiving webhooks at ${receiver.url} (${variant === 'fetch' ? 'fetch adapter' : 'node:http'})`,
);

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    const count = receiver.deliveries.length;
    console.error(`${signal}: stopping after ${count} verified ${count === 1 ? 'delivery' : 'deliveries'}.`);
    void receiver.close();
  });
}
