/**
 * The webhook envelope of PROTOCOL.md §6, declared here without dependencies (receivers install
 * only this package). `test/protocol-compat.test.ts` proves it matches `@svc/protocol`.
 */

/**
 * The payload version every webhook of this contract carries in `version`.
 *
 * @example
 * ```ts
 * import { WEBHOOK_VERSION } from '@svc/webhook-verify';
 *
 * if (event.version !== WEBHOOK_VERSION) console.warn('unexpected webhook payload version', event.version);
 * ```
 */
export const WEBHOOK_VERSION = '2026-11-01';

/**
 * The cluster event types: their `data` carries `cluster` and `links.replay`.
 *
 * @example
 * ```ts
 * import { CLUSTER_WEBHOOK_EVENT_TYPES } from '@svc/webhook-verify';
 *
 * CLUSTER_WEBHOOK_EVENT_TYPES.includes('cluster.created'); // true
 * ```
 */
export const CLUSTER_WEBHOOK_EVENT_TYPES = [
  'cluster.created',
  'cluster.regressed',
  'cluster.threshold',
  'cluster.reopened',
] as const;

/**
 * Every other notification type (`data` without `cluster`).
 *
 * @example
 * ```ts
 * import { OTHER_WEBHOOK_EVENT_TYPES } from '@svc/webhook-verify';
 *
 * OTHER_WEBHOOK_EVENT_TYPES.includes('notification.test'); // true
 * ```
 */
export const OTHER_WEBHOOK_EVENT_TYPES = [
  'error.new',
  'error.rate',
  'release.regression',
  'vitals.regression',
  'monitor.trigger',
  'ai.digest',
  'ai.anomaly',
  'ai.deep_analysis_ready',
  'live.help_requested',
  'live.control_started',
  'usage.threshold',
  'billing.event',
  'privacy.leak_radar',
  'security.break_glass',
  'security.sso_changed',
  'security.token_created',
  'custom',
  'notification.test',
] as const;

/**
 * Every webhook event type this version of the package knows, in the order of `@svc/protocol`.
 * The service may add types: a receiver must answer 2xx to a type it does not handle.
 *
 * @example
 * ```ts
 * import { WEBHOOK_EVENT_TYPES } from '@svc/webhook-verify';
 *
 * const clusterTypes = WEBHOOK_EVENT_TYPES.filter((type) => type.startsWith('cluster.'));
 * ```
 */
export const WEBHOOK_EVENT_TYPES = [...CLUSTER_WEBHOOK_EVENT_TYPES, ...OTHER_WEBHOOK_EVENT_TYPES] as const;

/**
 * A cluster event type: `cluster.created` | `cluster.regressed` | `cluster.threshold` |
 * `cluster.reopened`.
 *
 * @example
 * ```ts
 * const type: ClusterWebhookEventType = 'cluster.regressed';
 * ```
 */
export type ClusterWebhookEventType = (typeof CLUSTER_WEBHOOK_EVENT_TYPES)[number];

/**
 * A webhook event type known to this version of the package.
 *
 * @example
 * ```ts
 * const type: WebhookEventType = 'notification.test';
 * ```
 */
export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];

/**
 * The severity of a notification.
 *
 * @example
 * ```ts
 * const urgent = (severity: WebhookSeverity) => severity === 'critical' || severity === 'high';
 * ```
 */
export type WebhookSeverity = 'critical' | 'high' | 'medium' | 'low' | 'info';

/**
 * The `data` of a notification other than a cluster event. `counts` holds non-negative integers
 * by name, `links` absolute URLs by name.
 *
 * @example
 * ```ts
 * const line = (data: WebhookData) => `[${data.severity}] ${data.title}: ${data.summary}`;
 * ```
 */
export interface WebhookData {
  title: string;
  summary: string;
  severity: WebhookSeverity;
  counts: Record<string, number>;
  route?: string | undefined;
  release?: string | undefined;
  links: Record<string, string>;
}

/**
 * The issue cluster of a cluster event: `id` (`cl_…`), detector or error `kind`, `title` and
 * the occurrences of the last 24 h.
 *
 * @example
 * ```ts
 * const label = (cluster: WebhookCluster) => `${cluster.title} (${cluster.count24h} in 24 h)`;
 * ```
 */
export interface WebhookCluster {
  id: string;
  kind: string;
  title: string;
  count24h: number;
}

/**
 * The `data` of a cluster event: the common fields plus `cluster` and a `links.replay` URL
 * (`{app_url}/sessions/<id>?t=<offset ms>`).
 *
 * @example
 * ```ts
 * const replayUrl = (data: ClusterWebhookData) => data.links.replay;
 * ```
 */
export interface ClusterWebhookData extends Omit<WebhookData, 'links'> {
  links: { replay: string; [name: string]: string };
  cluster: WebhookCluster;
}

/**
 * The fields every webhook envelope carries.
 *
 * @example
 * ```ts
 * const where = (event: WebhookEnvelope<string, WebhookData>) => `${event.orgId}/${event.projectId}`;
 * ```
 */
export interface WebhookEnvelope<Type extends string, Data> {
  /** `evt_…`: the same for every attempt of a delivery, so use it to deduplicate. */
  id: string;
  type: Type;
  version: typeof WEBHOOK_VERSION;
  /** ISO 8601 in UTC, e.g. `2025-11-21T04:40:12.345Z`. */
  createdAt: string;
  orgId: string;
  projectId: string;
  data: Data;
}

/**
 * A cluster event (`cluster.*`): `data.cluster` and `data.links.replay` are present.
 *
 * @example
 * ```ts
 * const onCluster = (event: ClusterWebhookEvent) => console.log(event.data.cluster.title);
 * ```
 */
export type ClusterWebhookEvent = WebhookEnvelope<ClusterWebhookEventType, ClusterWebhookData>;

/**
 * Any other known notification.
 *
 * @example
 * ```ts
 * const isTest = (event: NotificationWebhookEvent) => event.type === 'notification.test';
 * ```
 */
export type NotificationWebhookEvent = WebhookEnvelope<
  (typeof OTHER_WEBHOOK_EVENT_TYPES)[number],
  WebhookData
>;

/**
 * A verified webhook delivery body, discriminated on `type` so that `switch (event.type)`
 * narrows `data` (cluster events carry `data.cluster`).
 *
 * At run time `type` can also be a type added to the service after this package was published:
 * `verifyWebhook` returns such events unchanged (it never rejects an unknown type). Always
 * keep a `default` branch that acknowledges them; type the value there as
 * {@link UnknownWebhookEvent}. (The union deliberately does not include a `string` member: one
 * would stop `switch (event.type)` from narrowing `data`.)
 *
 * @example
 * ```ts
 * import type { UnknownWebhookEvent, WebhookEvent } from '@svc/webhook-verify';
 *
 * function handle(event: WebhookEvent) {
 *   switch (event.type) {
 *     case 'cluster.created':
 *       console.log(event.data.cluster.title, event.data.links.replay);
 *       break;
 *     default: {
 *       const other: UnknownWebhookEvent = event; // a type this code does not handle, or a newer one
 *       console.log('ignored', other.type);
 *     }
 *   }
 * }
 * ```
 */
export type WebhookEvent = ClusterWebhookEvent | NotificationWebhookEvent;

/**
 * What a receiver may rely on for an event of any type, including types newer than this
 * package: the envelope, and `data` as an object (the common fields are present for every
 * notification the service sends today).
 *
 * @example
 * ```ts
 * const describe = (event: UnknownWebhookEvent) => `${event.type} ${event.id}`;
 * ```
 */
export interface UnknownWebhookEvent {
  id: string;
  type: WebhookEventType | (string & {});
  version: string;
  createdAt: string;
  orgId: string;
  projectId: string;
  data: Partial<WebhookData> & Record<string, unknown>;
}

/**
 * Whether `type` is a webhook event type this version of the package knows.
 *
 * @example
 * ```ts
 * import { isKnownWebhookEventType } from '@svc/webhook-verify';
 *
 * isKnownWebhookEventType('cluster.created'); // true
 * isKnownWebhookEventType('something.new'); // false
 * ```
 */
export function isKnownWebhookEventType(type: string): type is WebhookEventType {
  return knownTypes.has(type);
}

const knownTypes: ReadonlySet<string> = new Set(WEBHOOK_EVENT_TYPES);

/**
 * The raw request body, exactly as received: a string (decoded as UTF-8 and not altered), a
 * `Uint8Array` (a Node `Buffer` is one), an `ArrayBuffer` or any other `ArrayBufferView`.
 *
 * @example
 * ```ts
 * const body: RawBody = await request.arrayBuffer();
 * ```
 */
export type RawBody = string | Uint8Array | ArrayBuffer | ArrayBufferView;

/**
 * Something with a `get(name)` method, such as the Fetch API's `Headers`.
 *
 * @example
 * ```ts
 * const headers: HeadersLike = new Headers({ 'x-service-signature': 't=1,v1=…' });
 * ```
 */
export interface HeadersLike {
  get(name: string): string | null | undefined;
}

/**
 * Where the signature header comes from: its value (a `string`, or a `string[]` when it was
 * sent more than once, as `IncomingMessage#headersDistinct` gives it), a `Headers`-like object,
 * or a plain header record such as Node's `request.headers` (looked up as
 * `x-service-signature`, case-insensitively). `null` or `undefined` means missing.
 *
 * @example
 * ```ts
 * const fromFetch: SignatureHeader = request.headers;
 * const fromNode: SignatureHeader = incomingMessage.headers['x-service-signature'];
 * ```
 */
export type SignatureHeader =
  | string
  | readonly string[]
  | HeadersLike
  | Readonly<Record<string, string | readonly string[] | undefined>>
  | null
  | undefined;

/**
 * The channel's signing secret (`whsec_…`), or several during a rotation. Each is used as
 * given: the HMAC key is the UTF-8 bytes of the whole string, prefix included.
 *
 * @example
 * ```ts
 * const secrets: WebhookSecrets = [process.env.WEBHOOK_SECRET_NEW ?? '', process.env.WEBHOOK_SECRET_OLD ?? ''];
 * ```
 */
export type WebhookSecrets = string | readonly string[];

/**
 * Options of {@link verifyWebhook}.
 *
 * @example
 * ```ts
 * const options: VerifyWebhookOptions = { toleranceSec: 600, now: Date.now() };
 * ```
 */
export interface VerifyWebhookOptions {
  /**
   * How far `t` may be from now, in seconds, **in either direction** (default 300). `Infinity`
   * turns the check off (for replaying stored deliveries in tests); `0` requires the same
   * second (unlike Stripe, where 0 turns the check off).
   */
  toleranceSec?: number | undefined;
  /** The current time: a `Date` or milliseconds since the Unix epoch (default `Date.now()`). */
  now?: Date | number | undefined;
}

/**
 * Options of {@link signWebhook}.
 *
 * @example
 * ```ts
 * const options: SignWebhookOptions = { timestamp: 1_763_700_000 };
 * ```
 */
export interface SignWebhookOptions {
  /** `t`: Unix time in whole seconds (default: now). */
  timestamp?: number | undefined;
}

/**
 * The signature of `verifyWebhook`, the same in the Node and the WebCrypto build.
 *
 * @example
 * ```ts
 * const verify: VerifyWebhook = verifyWebhook;
 * ```
 */
export type VerifyWebhook = (
  rawBody: RawBody,
  signatureHeader: SignatureHeader,
  secrets: WebhookSecrets,
  options?: VerifyWebhookOptions,
) => Promise<WebhookEvent>;

/**
 * The signature of `signWebhook`, the same in the Node and the WebCrypto build.
 *
 * @example
 * ```ts
 * const sign: SignWebhook = signWebhook;
 * ```
 */
export type SignWebhook = (
  rawBody: RawBody,
  secrets: WebhookSecrets,
  options?: SignWebhookOptions,
) => Promise<string>;
