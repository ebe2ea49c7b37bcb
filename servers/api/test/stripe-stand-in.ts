import { randomBytes } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

// A stand-in for Stripe's API, which cannot run here (a third-party SaaS): a real HTTP server on
// 127.0.0.1 answering exactly the endpoints the billing module uses, in Stripe's documented shapes,
// so that the real `stripe` package talks to it (its `host`/`port`/`protocol` options, through
// `SVC_STRIPE_API_BASE`):
//
//   POST /v1/customers                 a customer (an `Idempotency-Key` seen before answers the same one)
//   POST /v1/checkout/sessions         a Checkout Session (`mode`, `customer`, `line_items[0][price]`, URLs)
//   POST /v1/billing_portal/sessions   a Billing Portal session
//   GET  /v1/invoices                  a customer's invoices, newest first, `limit` and `starting_after`
//   GET  /v1/subscriptions/{id}        a subscription the test put there
//   POST /v1/billing/meter_events      a meter event (counted once per `identifier`)
//
// Requests are form-encoded (`a[b][0][c]=…`, kept here as flat keys); answers are JSON objects
// with `object` and `id`, lists `{ object: 'list', data, has_more, url }`, errors Stripe's
// `{ error: { type, message, code?, param? } }` with its statuses (400, 401, 404). Every request
// is recorded with its headers, so tests can check what would have left the server.

/** A request the stand-in received: method, path, query and form fields as flat keys. */
export interface StripeStandInRequest {
  method: string;
  path: string;
  query: Record<string, string>;
  form: Record<string, string>;
  headers: IncomingHttpHeaders;
}

// biome-ignore lint/suspicious/noExplicitAny: Stripe objects as JSON, as tests build and read them
type StripeObject = Record<string, any>;

export interface StripeStandIn {
  /** `http://127.0.0.1:<port>`: `SVC_STRIPE_API_BASE`. */
  apiBase: string;
  /** The secret key it accepts (`SVC_STRIPE_SECRET_KEY`). */
  secretKey: string;
  received: StripeStandInRequest[];
  customers: Map<string, StripeObject>;
  subscriptions: Map<string, StripeObject>;
  /** Invoices, oldest first (listed newest first). */
  invoices: StripeObject[];
  /** Meter events by identifier (a repeated identifier is not counted again). */
  meterEvents: Map<string, StripeObject>;
  /** Prices that exist (checkout with another one is Stripe's 400 `resource_missing`). */
  prices: Set<string>;
  /** The next request to `path` answers this Stripe error instead (once). */
  failNext(path: string, status: number, error: { type: string; message: string; code?: string }): void;
  close(): Promise<void>;
}

function newId(prefix: string): string {
  return `${prefix}_${randomBytes(12).toString('hex')}`;
}

function stripeError(status: number, type: string, message: string, extra: Record<string, string> = {}) {
  return { status, body: { error: { type, message, ...extra } } };
}

/**
 * A subscription object as Stripe's API version 2026-10-28 has it (the period is on its items),
 * for the stand-in's `subscriptions` and for webhook events' `data.object`.
 */
export function stripeSubscription(options: {
  id: string;
  customer: string;
  price: string;
  status?: string;
  periodStart?: number;
  periodEnd?: number;
  cancelAtPeriodEnd?: boolean;
  metadata?: Record<string, string>;
}): StripeObject {
  const start = options.periodStart ?? Math.floor(Date.UTC(2026, 11, 1) / 1000);
  const end = options.periodEnd ?? Math.floor(Date.UTC(2027, 0, 1) / 1000);
  return {
    id: options.id,
    object: 'subscription',
    customer: options.customer,
    status: options.status ?? 'active',
    cancel_at_period_end: options.cancelAtPeriodEnd ?? false,
    created: start,
    livemode: false,
    metadata: options.metadata ?? {},
    items: {
      object: 'list',
      data: [
        {
          id: `si_${options.id.slice(4)}`,
          object: 'subscription_item',
          price: { id: options.price, object: 'price', currency: 'eur', unit_amount: 4900 },
          quantity: 1,
          current_period_start: start,
          current_period_end: end,
        },
      ],
      has_more: false,
      url: `/v1/subscription_items?subscription=${options.id}`,
    },
  };
}

/**
 * Starts the stand-in on 127.0.0.1 (a free port).
 *
 * @example
 * ```ts
 * const stripe = await startStripeStandIn();
 * const test = await createTestApp(engine, { logger: false }, { SVC_STRIPE_SECRET_KEY: stripe.secretKey, SVC_STRIPE_API_BASE: stripe.apiBase, … });
 * ```
 */
export async function startStripeStandIn(): Promise<StripeStandIn> {
  const secretKey = `sk_test_${randomBytes(16).toString('hex')}`;
  const received: StripeStandInRequest[] = [];
  const customers = new Map<string, StripeObject>();
  const customersByKey = new Map<string, StripeObject>();
  const subscriptions = new Map<string, StripeObject>();
  const invoices: StripeObject[] = [];
  const meterEvents = new Map<string, StripeObject>();
  const prices = new Set<string>();
  const failures = new Map<string, { status: number; body: StripeObject }>();

  function answer(request: StripeStandInRequest): { status: number; body: StripeObject } {
    const failure = failures.get(request.path);
    if (failure !== undefined) {
      failures.delete(request.path);
      return failure;
    }
    if (request.headers.authorization !== `Bearer ${secretKey}`)
      return stripeError(401, 'invalid_request_error', 'Invalid API Key provided: sk_test_****');
    const { method, path, form, query } = request;
    const now = Math.floor(Date.now() / 1000);
    if (method === 'POST' && path === '/v1/customers') {
      const key = String(request.headers['idempotency-key'] ?? '');
      const known = key === '' ? undefined : customersByKey.get(key);
      if (known !== undefined) return { status: 200, body: known };
      const customer = {
        id: newId('cus'),
        object: 'customer',
        name: form.name ?? null,
        email: form.email ?? null,
        metadata: { organization_id: form['metadata[organization_id]'] },
        created: now,
        livemode: false,
      };
      customers.set(customer.id, customer);
      if (key !== '') customersByKey.set(key, customer);
      return { status: 200, body: customer };
    }
    if (method === 'POST' && path === '/v1/checkout/sessions') {
      const price = form['line_items[0][price]'];
      if (price === undefined || !prices.has(price))
        return stripeError(400, 'invalid_request_error', `No such price: '${price}'`, {
          code: 'resource_missing',
          param: 'line_items[0][price]',
        });
      if (form.customer === undefined || !customers.has(form.customer))
        return stripeError(400, 'invalid_request_error', `No such customer: '${form.customer}'`, {
          code: 'resource_missing',
          param: 'customer',
        });
      const id = newId('cs_test');
      return {
        status: 200,
        body: {
          id,
          object: 'checkout.session',
          mode: form.mode,
          customer: form.customer,
          client_reference_id: form.client_reference_id ?? null,
          success_url: form.success_url,
          cancel_url: form.cancel_url,
          status: 'open',
          payment_status: 'unpaid',
          subscription: null,
          url: `https://checkout.stripe.com/c/pay/${id}`,
          created: now,
          livemode: false,
        },
      };
    }
    if (method === 'POST' && path === '/v1/billing_portal/sessions') {
      if (form.customer === undefined || !customers.has(form.customer))
        return stripeError(400, 'invalid_request_error', `No such customer: '${form.customer}'`, {
          code: 'resource_missing',
          param: 'customer',
        });
      const id = newId('bps');
      return {
        status: 200,
        body: {
          id,
          object: 'billing_portal.session',
          customer: form.customer,
          return_url: form.return_url ?? null,
          url: `https://billing.stripe.com/p/session/${id}`,
          created: now,
          livemode: false,
        },
      };
    }
    if (method === 'GET' && path === '/v1/invoices') {
      const limit = Math.min(100, Math.max(1, Number(query.limit ?? 10)));
      const mine = invoices.filter((invoice) => invoice.customer === query.customer).reverse();
      const after = query.starting_after;
      const start = after === undefined ? 0 : mine.findIndex((invoice) => invoice.id === after) + 1;
      if (after !== undefined && start === 0)
        return stripeError(400, 'invalid_request_error', `No such invoice: '${after}'`, {
          code: 'resource_missing',
          param: 'starting_after',
        });
      const data = mine.slice(start, start + limit);
      return {
        status: 200,
        body: { object: 'list', data, has_more: start + limit < mine.length, url: '/v1/invoices' },
      };
    }
    const subscription = /^\/v1\/subscriptions\/([^/]+)$/.exec(path);
    if (method === 'GET' && subscription !== null) {
      const found = subscriptions.get(decodeURIComponent(subscription[1] as string));
      return found === undefined
        ? stripeError(404, 'invalid_request_error', `No such subscription: '${subscription[1]}'`, {
            code: 'resource_missing',
          })
        : { status: 200, body: found };
    }
    if (method === 'POST' && path === '/v1/billing/meter_events') {
      if (form.event_name === undefined || form['payload[stripe_customer_id]'] === undefined)
        return stripeError(400, 'invalid_request_error', 'Missing required param: event_name or payload.');
      const identifier = form.identifier ?? newId('mev');
      const event = meterEvents.get(identifier) ?? {
        object: 'billing.meter_event',
        created: now,
        event_name: form.event_name,
        identifier,
        livemode: false,
        payload: { stripe_customer_id: form['payload[stripe_customer_id]'], value: form['payload[value]'] },
        timestamp: Number(form.timestamp ?? now),
      };
      meterEvents.set(identifier, event);
      return { status: 200, body: event };
    }
    return stripeError(404, 'invalid_request_error', `Unrecognized request URL (${method}: ${path}).`);
  }

  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const url = new URL(request.url ?? '/', 'http://stand-in');
      const recorded: StripeStandInRequest = {
        method: request.method ?? 'GET',
        path: url.pathname,
        query: Object.fromEntries(url.searchParams),
        form: Object.fromEntries(new URLSearchParams(Buffer.concat(chunks).toString('utf8'))),
        headers: request.headers,
      };
      received.push(recorded);
      const { status, body } = answer(recorded);
      response.writeHead(status, { 'content-type': 'application/json', 'request-id': newId('req') });
      response.end(JSON.stringify(body));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    apiBase: `http://127.0.0.1:${port}`,
    secretKey,
    received,
    customers,
    subscriptions,
    invoices,
    meterEvents,
    prices,
    failNext(path, status, error) {
      failures.set(path, { status, body: { error } });
    },
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((error) => (error ? reject(error) : resolve()));
      }),
  };
}
