/**
 * What both receivers share: the types of the public API, the record of deliveries and
 * rejections (with `waitFor`), and listening on / closing a `node:http` server.
 */
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  describeErrorCode,
  type WebhookEvent,
  type WebhookSecrets,
  type WebhookVerificationError,
} from '@svc/webhook-verify';

/**
 * One verified delivery, as it arrived.
 *
 * @example
 * ```ts
 * const delivery = await receiver.waitFor((delivery) => delivery.event.type === 'cluster.created');
 * delivery.attempt; // 1
 * ```
 */
export interface ReceivedDelivery {
  /** The verified and parsed body. */
  event: WebhookEvent;
  /** The body exactly as received (the bytes the signature covers, as UTF-8). */
  rawBody: string;
  /** `X-Service-Event-Id` as received (`''` when absent: the header is not signed, `event.id` is). */
  eventId: string;
  /** `X-Service-Delivery-Id` as received (`''` when absent). */
  deliveryId: string;
  /** `X-Service-Attempt` (`0` when absent or not a positive integer). */
  attempt: number;
  /** `X-Service-Signature` as received. */
  signature: string;
  /** Whether a verified delivery of the same `event.id` arrived before (delivery is at least once). */
  duplicate: boolean;
  /** `Date.now()` when the request arrived. */
  receivedAt: number;
}

/**
 * A request to the webhook path that was turned away: it failed verification (400) or its body
 * was over the limit (413).
 *
 * @example
 * ```ts
 * receiver.rejected[0]?.code; // 'no_matching_signature'
 * ```
 */
export interface RejectedRequest {
  /** The `WebhookVerificationError` code, e.g. `no_matching_signature`, `timestamp_too_old`. */
  code: string;
  /** The detailed message (the HTTP answer carries only the fixed description of the code). */
  message: string;
  /** `X-Service-Signature` as received, when present. */
  signature?: string;
  /** `X-Service-Delivery-Id` as received, when present. */
  deliveryId?: string;
  /** `Date.now()` when the request arrived. */
  receivedAt: number;
}

/**
 * The answer to a verified delivery: a status (with headers and a body), `'hang'` (never
 * answer; `close()` ends the request) or `'close'` (destroy the connection without answering).
 *
 * @example
 * ```ts
 * const busy: ReceiverResponse = { status: 429, headers: { 'retry-after': '30' } };
 * ```
 */
export type ReceiverResponse =
  | { status: number; headers?: Record<string, string>; body?: string }
  | 'hang'
  | 'close';

/**
 * Options of {@link startNodeReceiver} and {@link startFetchReceiver}.
 *
 * @example
 * ```ts
 * const options: ReceiverOptions = { secrets: process.env.WEBHOOK_SECRET ?? '', port: 4000 };
 * ```
 */
export interface ReceiverOptions {
  /** The channel's `whsec_…` secret, or several during a rotation. */
  secrets: string | readonly string[];
  /** Default `'127.0.0.1'`. */
  host?: string;
  /** Default `0` (an ephemeral port: read it from `url`). */
  port?: number;
  /** Default `'/webhooks'`. Other paths answer 404. */
  path?: string;
  /** The largest body accepted, in bytes (default 1 MiB, the package's default); larger answers 413. */
  limit?: number;
  /**
   * What to answer a verified delivery (default `200 {"received":true}`). `'hang'` never
   * answers; `'close'` destroys the socket. Lets tests script 500s, 3xx, 429 + `Retry-After`,
   * hangs and closed connections. May be async; a throw answers a masked 500.
   */
  respond?: (delivery: ReceivedDelivery) => ReceiverResponse | Promise<ReceiverResponse>;
  /** Called with each rejected request, after it is recorded (the command line logs them). */
  onRejected?: (request: RejectedRequest) => void;
}

/**
 * A running receiver.
 *
 * @example
 * ```ts
 * const receiver = await startNodeReceiver({ secrets: 'whsec_…' });
 * // point a webhook channel at receiver.url, trigger a notification, then:
 * const delivery = await receiver.waitFor((delivery) => delivery.event.type === 'notification.test');
 * await receiver.close();
 * ```
 */
export interface WebhookReceiver {
  /** Where to deliver, e.g. `http://127.0.0.1:41234/webhooks`. */
  url: string;
  /** Verified deliveries in arrival order, also the ones `respond` answered non-2xx. */
  deliveries: ReceivedDelivery[];
  /** Requests that failed verification (400) or were too large (413), in arrival order. */
  rejected: RejectedRequest[];
  /** Replaces the secrets, e.g. after a rotation. */
  setSecrets(secrets: string | readonly string[]): void;
  /** Replaces `respond` (`undefined` restores the default 200). */
  setResponder(respond: ReceiverOptions['respond']): void;
  /**
   * The first delivery, already received or still to come, that `predicate` accepts. Rejects
   * after `timeoutMs` (default 10 s) with a message listing what did arrive, and when the
   * receiver closes.
   */
  waitFor(predicate: (delivery: ReceivedDelivery) => boolean, timeoutMs?: number): Promise<ReceivedDelivery>;
  /** Stops listening and ends every open request, hanging ones included. */
  close(): Promise<void>;
}

/** The headers of a delivery, read with a case-insensitive lookup. */
export interface DeliveryHeaders {
  eventId: string;
  deliveryId: string;
  attempt: number;
  signature: string;
}

/**
 * Reads the delivery headers with `get` (a lowercase name in; the value, or `undefined`, out).
 */
export function readDeliveryHeaders(get: (name: string) => string | undefined): DeliveryHeaders {
  const attempt = get('x-service-attempt')?.trim() ?? '';
  return {
    eventId: get('x-service-event-id') ?? '',
    deliveryId: get('x-service-delivery-id') ?? '',
    attempt: /^[1-9]\d{0,8}$/.test(attempt) ? Number(attempt) : 0,
    signature: get('x-service-signature') ?? '',
  };
}

/** The path deliveries are expected on: `options.path`, default `/webhooks`. */
export function webhookPath(options: ReceiverOptions): string {
  return options.path ?? '/webhooks';
}

/** The default answer to a verified delivery, the same as the package's adapters. */
export const receivedResponse: ReceiverResponse = {
  status: 200,
  headers: { 'content-type': 'application/json; charset=utf-8' },
  body: JSON.stringify({ received: true }),
};

/** The JSON error bodies the receivers answer with, `{ error, code }`. */
export const errorBodies = {
  notFound: { error: 'Not Found', code: 'not_found' },
  methodNotAllowed: { error: 'Webhooks are delivered with POST.', code: 'method_not_allowed' },
  internal: { error: 'Internal Server Error', code: 'internal_error' },
  rejected: (error: WebhookVerificationError) => ({ error: describeErrorCode(error.code), code: error.code }),
} as const;

/** Checks secrets as the package would, but when they are set rather than on the first delivery. */
function checkSecrets(secrets: WebhookSecrets): WebhookSecrets {
  const list: readonly unknown[] = typeof secrets === 'string' ? [secrets] : secrets;
  if (
    !Array.isArray(list) ||
    list.length === 0 ||
    list.some((secret) => typeof secret !== 'string' || secret === '')
  ) {
    throw new TypeError(
      'secrets must be a non-empty whsec_… string or a non-empty array of them (is WEBHOOK_SECRET set?)',
    );
  }
  return typeof secrets === 'string' ? secrets : [...secrets];
}

interface Waiter {
  predicate: (delivery: ReceivedDelivery) => boolean;
  resolve: (delivery: ReceivedDelivery) => void;
  reject: (error: Error) => void;
  timer: NodeJS.Timeout;
}

/** The state of one receiver, whichever server answers the requests. */
export interface DeliveryLog {
  readonly deliveries: ReceivedDelivery[];
  readonly rejected: RejectedRequest[];
  /** The secrets to verify the next request with. */
  secrets(): WebhookSecrets;
  setSecrets(secrets: WebhookSecrets): void;
  setResponder(respond: ReceiverOptions['respond']): void;
  /** Records a verified delivery (flagging duplicates) and wakes `waitFor`. */
  recordDelivery(delivery: Omit<ReceivedDelivery, 'duplicate'>): ReceivedDelivery;
  /** Records a turned-away request. */
  recordRejection(error: WebhookVerificationError, headers: DeliveryHeaders, receivedAt: number): void;
  /** What the responder answers for a delivery. */
  respond(delivery: ReceivedDelivery): Promise<ReceiverResponse>;
  waitFor: WebhookReceiver['waitFor'];
  /** Rejects every pending `waitFor`. */
  close(): void;
}

/**
 * The record of one receiver.
 *
 * @example
 * ```ts
 * const log = createDeliveryLog({ secrets: 'whsec_…' });
 * ```
 */
export function createDeliveryLog(options: ReceiverOptions): DeliveryLog {
  let secrets = checkSecrets(options.secrets);
  let responder = options.respond;
  const deliveries: ReceivedDelivery[] = [];
  const rejected: RejectedRequest[] = [];
  const seenEventIds = new Set<string>();
  const waiters = new Set<Waiter>();
  let closed = false;

  function settle(waiter: Waiter, outcome: { delivery: ReceivedDelivery } | { error: Error }) {
    clearTimeout(waiter.timer);
    waiters.delete(waiter);
    if ('delivery' in outcome) waiter.resolve(outcome.delivery);
    else waiter.reject(outcome.error);
  }

  /** Offers a delivery to a waiter; a throwing predicate rejects that `waitFor`. */
  function offer(waiter: Waiter, delivery: ReceivedDelivery): boolean {
    try {
      if (!waiter.predicate(delivery)) return false;
    } catch (error) {
      settle(waiter, { error: error instanceof Error ? error : new Error(String(error)) });
      return true;
    }
    settle(waiter, { delivery });
    return true;
  }

  return {
    deliveries,
    rejected,
    secrets: () => secrets,
    setSecrets(next) {
      secrets = checkSecrets(next);
    },
    setResponder(respond) {
      responder = respond;
    },
    recordDelivery(fields) {
      const delivery: ReceivedDelivery = { ...fields, duplicate: seenEventIds.has(fields.event.id) };
      seenEventIds.add(fields.event.id);
      deliveries.push(delivery);
      for (const waiter of [...waiters]) offer(waiter, delivery);
      return delivery;
    },
    recordRejection(error, headers, receivedAt) {
      const request: RejectedRequest = { code: error.code, message: error.message, receivedAt };
      if (headers.signature !== '') request.signature = headers.signature;
      if (headers.deliveryId !== '') request.deliveryId = headers.deliveryId;
      rejected.push(request);
      options.onRejected?.(request);
    },
    async respond(delivery) {
      return responder === undefined ? receivedResponse : responder(delivery);
    },
    waitFor(predicate, timeoutMs = 10_000) {
      if (closed) return Promise.reject(new Error('waitFor: the receiver is closed.'));
      const arrived = deliveries.find(predicate);
      if (arrived !== undefined) return Promise.resolve(arrived);
      return new Promise((resolve, reject) => {
        const waiter: Waiter = {
          predicate,
          resolve,
          reject,
          timer: setTimeout(() => {
            settle(waiter, {
              error: new Error(`waitFor: no delivery matched within ${timeoutMs} ms. ${describeArrivals()}`),
            });
          }, timeoutMs),
        };
        waiters.add(waiter);
      });
    },
    close() {
      closed = true;
      for (const waiter of [...waiters]) {
        settle(waiter, { error: new Error(`waitFor: the receiver closed first. ${describeArrivals()}`) });
      }
    },
  };

  function describeArrivals(): string {
    const lines = [
      ...deliveries.map(
        (delivery) =>
          `  delivered ${delivery.event.id} ${delivery.event.type} attempt ${delivery.attempt}` +
          `${delivery.deliveryId === '' ? '' : ` ${delivery.deliveryId}`}${delivery.duplicate ? ' (duplicate)' : ''}`,
      ),
      ...rejected.map(
        (request) =>
          `  rejected ${request.code}${request.deliveryId === undefined ? '' : ` ${request.deliveryId}`}: ${request.message}`,
      ),
    ];
    if (lines.length === 0) return 'Nothing arrived.';
    return `Arrived (${deliveries.length} verified, ${rejected.length} rejected):\n${lines.join('\n')}`;
  }
}

/**
 * Listens with `server` and returns the receiver around `log`; `close()` ends every open
 * connection, hanging requests included.
 */
export async function listen(
  server: Server,
  log: DeliveryLog,
  options: ReceiverOptions,
): Promise<WebhookReceiver> {
  const host = options.host ?? '127.0.0.1';
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  const url = `http://${host.includes(':') ? `[${host}]` : host}:${port}${webhookPath(options)}`;

  let closing: Promise<void> | undefined;
  return {
    url,
    deliveries: log.deliveries,
    rejected: log.rejected,
    setSecrets: (secrets) => log.setSecrets(secrets),
    setResponder: (respond) => log.setResponder(respond),
    waitFor: (predicate, timeoutMs) => log.waitFor(predicate, timeoutMs),
    close() {
      closing ??= new Promise<void>((resolve, reject) => {
        log.close();
        server.close((error) => (error === undefined ? resolve() : reject(error)));
        server.closeAllConnections();
      });
      return closing;
    },
  };
}
