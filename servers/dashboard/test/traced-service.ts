import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import {
  context,
  propagation,
  ROOT_CONTEXT,
  type Span,
  SpanKind,
  SpanStatusCode,
  trace,
} from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPLogExporter } from '@opentelemetry/exporter-logs-otlp-http';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { LoggerProvider, SimpleLogRecordProcessor } from '@opentelemetry/sdk-logs';
import { SimpleSpanProcessor, TracerProvider } from '@opentelemetry/sdk-trace';
import type { Browser } from 'playwright-core';
import type { Dashboard } from './harness.ts';
import { type Json, sdkBundle, servePage } from './recorded-page.ts';

// A small Node HTTP service instrumented with the real OpenTelemetry SDK, as a customer's backend
// is: the trace SDK with Node's context manager (AsyncLocalStorage) and the W3C trace context
// propagator, so its server span continues the browser's `traceparent`; spans exported with the
// OTLP protobuf exporter and logs with the OTLP HTTP (JSON) exporter to the dashboard's server.
// (`@opentelemetry/sdk-trace-node` ended at 2.x, whose peer range stops below the API 1.10 the
// repository uses; in 3.x its parts are these packages, as the sdk-trace README sets them up.)
// And a page recorded by the real browser SDK, on another origin, that calls the service.

/** The service's name in its resource: the waterfall's service column. */
export const SERVICE_NAME = 'shop-api';

/** What the service was sent: the `traceparent` of each call, by path. */
export interface ReceivedCall {
  method: string;
  path: string;
  traceparent?: string;
}

export interface TracedService {
  /** `http://127.0.0.1:<port>` */
  origin: string;
  received: ReceivedCall[];
  /** Waits until every span and log record ended so far has been exported. */
  flush(): Promise<void>;
  close(): Promise<void>;
}

/**
 * Starts the service: `GET /api/cart` answers 200 after a nested `SELECT cart` span and an INFO
 * log; `POST /api/orders` answers 500 after a `charge card` span that fails, and an ERROR log.
 * With `sessionIdFromHeader`, the server span carries `session.id` from the `x-session-id`
 * header the page sends (the way a service links spans to a session without trace ids).
 */
export async function startTracedService(
  dashboard: Dashboard,
  options: { sessionIdFromHeader: boolean },
): Promise<TracedService> {
  const headers = { authorization: dashboard.test.first.headers.authorization as string };
  const resource = resourceFromAttributes({ 'service.name': SERVICE_NAME });
  const spanExporter = new OTLPTraceExporter({ url: `${dashboard.base}/v1/otlp/traces`, headers });
  const tracerProvider = new TracerProvider({
    resource,
    spanProcessors: [new SimpleSpanProcessor({ exporter: spanExporter })],
  });
  const logExporter = new OTLPLogExporter({ url: `${dashboard.base}/v1/otlp/logs`, headers });
  const loggerProvider = new LoggerProvider({
    resource,
    processors: [new SimpleLogRecordProcessor({ exporter: logExporter })],
  });
  const contextManager = new AsyncLocalStorageContextManager().enable();
  context.setGlobalContextManager(contextManager);
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  const tracer = tracerProvider.getTracer('shop');
  const logger = loggerProvider.getLogger('shop');
  const received: ReceivedCall[] = [];

  function cors(response: ServerResponse) {
    response.setHeader('access-control-allow-origin', '*');
    response.setHeader('access-control-allow-methods', 'GET, POST');
    response.setHeader('access-control-allow-headers', 'traceparent, content-type, x-session-id');
  }

  /** A nested span of the request (a query, a call), ended after `milliseconds`. */
  function step(name: string, milliseconds: number, attributes: Record<string, string>, fail?: string) {
    return tracer.startActiveSpan(name, { kind: SpanKind.INTERNAL, attributes }, async (span: Span) => {
      await new Promise((resolve) => setTimeout(resolve, milliseconds));
      if (fail !== undefined) span.setStatus({ code: SpanStatusCode.ERROR, message: fail });
      span.end();
    });
  }

  async function handle(request: IncomingMessage, response: ServerResponse) {
    const path = (request.url ?? '/').replace(/\?.*$/, '');
    const method = request.method ?? 'GET';
    cors(response);
    if (method === 'OPTIONS') {
      response.writeHead(204).end();
      return;
    }
    const traceparent = request.headers.traceparent;
    received.push({ method, path, traceparent: typeof traceparent === 'string' ? traceparent : undefined });
    // The browser's trace: the server span is the child of the span id in its `traceparent`.
    const parent = propagation.extract(ROOT_CONTEXT, request.headers);
    const sessionId = request.headers['x-session-id'];
    const span = tracer.startSpan(
      `${method} ${path}`,
      {
        kind: SpanKind.SERVER,
        attributes: {
          'http.request.method': method,
          'url.path': path,
          ...(options.sessionIdFromHeader && typeof sessionId === 'string'
            ? { 'session.id': sessionId }
            : {}),
        },
      },
      parent,
    );
    await context.with(trace.setSpan(parent, span), async () => {
      if (method === 'GET' && path === '/api/cart') {
        await step('SELECT cart', 15, { 'db.system': 'postgresql', 'db.query.text': 'SELECT * FROM cart' });
        logger.emit({ body: 'cart read: 3 items', severityNumber: 9, severityText: 'INFO' });
        span.setAttribute('http.response.status_code', 200);
        response.writeHead(200, { 'content-type': 'application/json' }).end('{"items":3}');
      } else if (method === 'POST' && path === '/api/orders') {
        await step('charge card', 20, { 'payment.provider': 'test-bank' }, 'card declined');
        logger.emit({
          body: 'order 42 rejected: card declined',
          severityNumber: 17,
          severityText: 'ERROR',
          attributes: { 'order.id': 42 },
        });
        span.setAttribute('http.response.status_code', 500);
        span.setStatus({ code: SpanStatusCode.ERROR, message: 'order failed' });
        response.writeHead(500, { 'content-type': 'application/json' }).end('{"error":"card declined"}');
      } else {
        span.setAttribute('http.response.status_code', 404);
        response.writeHead(404).end();
      }
    });
    span.end();
  }

  const server: Server = createServer((request, response) => {
    handle(request, response).catch((error: unknown) => {
      response.writeHead(500).end(String(error));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no address');
  return {
    origin: `http://127.0.0.1:${address.port}`,
    received,
    async flush() {
      // The simple processors' flush does not wait for an export already started: the exporters' does.
      await tracerProvider.forceFlush();
      await spanExporter.forceFlush();
      await loggerProvider.forceFlush();
      await logExporter.forceFlush();
    },
    async close() {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await tracerProvider.shutdown();
      await loggerProvider.shutdown();
      contextManager.disable();
      context.disable();
      propagation.disable();
    },
  };
}

export interface ShopPage {
  url: string;
  close(): Promise<void>;
}

/**
 * A page on its own origin recorded by the browser SDK with `tracePropagationTargets` set to the
 * service's origin. "Load the cart" fetches `GET /api/cart`, "Place the order" posts
 * `/api/orders` with XMLHttpRequest, "Load the logo" fetches a missing file of the page's own
 * origin (no trace: not a target). With `sendSessionId`, the calls to the service carry the
 * session id in `x-session-id`.
 */
export async function serveShopPage(
  dashboard: Dashboard,
  service: TracedService,
  options: { sendSessionId: boolean },
): Promise<ShopPage> {
  const sdk = await sdkBundle();
  const init = {
    projectKey: dashboard.test.first.projectKey,
    endpoint: dashboard.base,
    release: '5.0.0',
    flushIntervalSec: 1,
    remoteConfig: false,
    tracePropagationTargets: [service.origin],
  };
  const html = `<!doctype html><html lang="en"><meta charset="utf-8"><title>Shop</title>
<body><main>
  <h1>Your order</h1>
  <button id="cart" type="button">Load the cart</button>
  <button id="order" type="button">Place the order</button>
  <button id="logo" type="button">Load the logo</button>
  <p id="result"></p>
</main>
<script src="/sdk.js"></script>
<script>
window.sdk = SvcSdk.init(${JSON.stringify(init)});
const service = ${JSON.stringify(service.origin)};
const extra = () => (${options.sendSessionId} ? { 'x-session-id': window.sdk.sessionId } : {});
const show = (text) => { document.getElementById('result').textContent = text; };
document.getElementById('cart').addEventListener('click', () => {
  fetch(service + '/api/cart?user=7', { headers: extra() }).then((answer) => show('cart ' + answer.status));
});
document.getElementById('order').addEventListener('click', () => {
  const request = new XMLHttpRequest();
  request.open('POST', service + '/api/orders');
  for (const [name, value] of Object.entries(extra())) request.setRequestHeader(name, value);
  request.setRequestHeader('content-type', 'application/json');
  request.onloadend = () => show('order ' + request.status);
  request.send('{"cart":7}');
});
document.getElementById('logo').addEventListener('click', () => {
  fetch('/logo.png').then((answer) => show('logo ' + answer.status));
});
</script></body></html>`;
  return servePage(html, sdk);
}

/** What the shopper did, in epoch ms measured in the page. */
export interface ShopVisit {
  sessionId: string;
  cartAt: number;
  orderAt: number;
}

/** Loads the cart, places the order (it fails), loads the missing logo; flushes; closes the tab. */
export async function visitShop(browser: Browser, page: ShopPage): Promise<ShopVisit> {
  const context = await browser.newContext({ viewport: { width: 1024, height: 640 } });
  const tab = await context.newPage();
  await tab.goto(page.url);
  await tab.waitForFunction(() => (window as Json).sdk?.sessionId !== undefined);
  await tab.waitForTimeout(1_000);
  const cartAt = await tab.evaluate(() => Date.now());
  await tab.locator('#cart').click();
  await tab.locator('#result').getByText('cart 200').waitFor();
  await tab.waitForTimeout(1_500);
  const orderAt = await tab.evaluate(() => Date.now());
  await tab.locator('#order').click();
  await tab.locator('#result').getByText('order 500').waitFor();
  await tab.waitForTimeout(1_500);
  await tab.locator('#logo').click();
  await tab.locator('#result').getByText('logo 404').waitFor();
  await tab.waitForTimeout(1_000);
  const sessionId = await tab.evaluate(async () => {
    await (window as Json).sdk.flush();
    return (window as Json).sdk.sessionId as string;
  });
  await context.close();
  return { sessionId, cartAt, orderAt };
}
