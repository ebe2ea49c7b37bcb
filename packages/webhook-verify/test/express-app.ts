/**
 * A real Express 5 app for `src/adapters/express.test.ts`, run in a child process:
 * `node --conditions=@svc/source test/express-app.ts` prints `{"port":…}` once listening.
 *
 * Why a child process: Express then runs exactly as in production, independent of the test
 * runner's resolution conditions (a vitest worker started with `--conditions import` once made
 * Express's CommonJS `require('is-promise')` load that package's ES module).
 *
 * Each scenario is a router with its own "global" middleware, mounted under its own prefix.
 * `GET /_recorded` returns the events handed to `onEvent` and the errors Express's error
 * handler saw.
 */
import express, { type ErrorRequestHandler } from 'express';
import { createWebhookMiddleware, keepRawBody, type WebhookRequest } from '../src/adapters/express.ts';
import { SECRET } from './helpers.ts';

const events: unknown[] = [];
const errors: string[] = [];
const onEvent = (event: unknown) => {
  events.push(event);
};
const errorHandler: ErrorRequestHandler = (error, _request, response, _next) => {
  errors.push(String(error));
  response.status(500).json({ error: 'Internal Server Error', code: 'internal_error' });
};

const app = express();
app.get('/_recorded', (_request, response) => {
  response.json({ events, errors });
});

// The webhook route first, then a global JSON parser for the rest of the (sub)app.
const after = express.Router();
after.post('/webhooks', createWebhookMiddleware({ secrets: SECRET, onEvent }));
after.use(express.json());
after.post('/api/echo', (request, response) => {
  response.json(request.body);
});
app.use('/after', after);

// Without onEvent: request.webhookEvent, then the next handler.
const next = express.Router();
next.post('/webhooks', createWebhookMiddleware({ secrets: SECRET }), (request, response) => {
  const { webhookEvent } = request as WebhookRequest;
  response.status(202).json({ type: webhookEvent?.type });
});
app.use('/next', next);

// A 1 KiB limit.
const limited = express.Router();
limited.post('/webhooks', createWebhookMiddleware({ secrets: SECRET, onEvent, limit: 1024 }));
app.use('/limited', limited);

// A global express.json() before the route that keeps the raw bytes.
const keep = express.Router();
keep.use(express.json({ verify: keepRawBody }));
keep.post('/webhooks', createWebhookMiddleware({ secrets: SECRET, onEvent }));
app.use('/keep', keep);

// express.raw() on the route before the middleware.
const raw = express.Router();
raw.post(
  '/webhooks',
  express.raw({ type: 'application/json' }),
  createWebhookMiddleware({ secrets: SECRET, onEvent }),
);
app.use('/raw', raw);

// The pitfall: a plain global express.json() before the route.
const pitfall = express.Router();
pitfall.use(express.json());
pitfall.post('/webhooks', createWebhookMiddleware({ secrets: SECRET, onEvent }));
app.use('/pitfall', pitfall);

// onEvent throws.
const throwing = express.Router();
throwing.post(
  '/webhooks',
  createWebhookMiddleware({
    secrets: SECRET,
    onEvent: async () => {
      throw new Error('handler failed');
    },
  }),
);
app.use('/throwing', throwing);

app.use(errorHandler);

const server = app.listen(0, '127.0.0.1', () => {
  const address = server.address();
  process.stdout.write(
    `${JSON.stringify({ port: typeof address === 'object' && address ? address.port : 0 })}\n`,
  );
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
