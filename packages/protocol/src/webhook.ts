import { z } from 'zod';
import { idSchema } from './ids.ts';
import { withJsonSchemaKeywords } from './json-schema-keywords.ts';
import { PROTOCOL_LIMITS } from './limits.ts';
import { boundedRecord, boundedText, countSchema, severitySchema } from './scalars.ts';

/**
 * The payload version every webhook of this protocol carries in `version`.
 *
 * @example
 * ```ts
 * if (event.version !== WEBHOOK_VERSION) log.warn('unexpected webhook version');
 * ```
 */
export const WEBHOOK_VERSION = '2026-11-01';

/**
 * The cluster event types: their `data` carries `cluster` and `links.replay`.
 *
 * @example
 * ```ts
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
 * Every other notification type.
 *
 * @example
 * ```ts
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
 * Every webhook event type, by group: cluster, error, regression, monitoring, ai, live,
 * account, privacy and security, other.
 *
 * @example
 * ```ts
 * import { WEBHOOK_EVENT_TYPES } from '@svc/protocol';
 *
 * const subscribed = WEBHOOK_EVENT_TYPES.filter((type) => type.startsWith('cluster.'));
 * ```
 */
export const WEBHOOK_EVENT_TYPES = [...CLUSTER_WEBHOOK_EVENT_TYPES, ...OTHER_WEBHOOK_EVENT_TYPES] as const;

/**
 * A webhook event type.
 *
 * @example
 * ```ts
 * const type: WebhookEventType = 'cluster.created';
 * ```
 */
export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];

/**
 * A webhook event type as a schema.
 *
 * @example
 * ```ts
 * webhookEventTypeSchema.parse('ai.digest');
 * ```
 */
export const webhookEventTypeSchema = z.enum(WEBHOOK_EVENT_TYPES);

/** An absolute http(s) URL; `format: uri` keeps the JSON Schema as strict as zod's URL check. */
const httpUrlSchema = withJsonSchemaKeywords(
  z
    .url()
    .max(PROTOCOL_LIMITS.maxUrlLength)
    .regex(/^https?:\/\//),
  { format: 'uri' },
);

/**
 * The issue cluster of a cluster event: `id` (`cl_`), detector or error `kind`, `title` and the
 * occurrences of the last 24 h.
 *
 * @example
 * ```ts
 * webhookClusterSchema.parse({ id: 'cl_01JD2S5V8Q8C4Y3K2W9T7N6M5H', kind: 'webrtc_freeze', title: 'Video freezes on /call', count24h: 12 });
 * ```
 */
export const webhookClusterSchema = z.object({
  id: idSchema('cl'),
  kind: boundedText(),
  title: boundedText(),
  count24h: countSchema,
});

const notificationDataFields = {
  title: boundedText(),
  summary: z.string().max(PROTOCOL_LIMITS.maxMessageLength),
  severity: severitySchema,
  counts: boundedRecord(countSchema),
  route: boundedText(PROTOCOL_LIMITS.maxUrlLength).optional(),
  release: boundedText().optional(),
};

/**
 * The `data` of a notification other than a cluster event: `title`, `summary`, `severity`,
 * `counts` (non-negative integers by name), `route?`, `release?` and `links` (URLs by name).
 *
 * @example
 * ```ts
 * webhookDataSchema.parse({ title: 'Test', summary: 'A test notification', severity: 'info', counts: {}, links: {} });
 * ```
 */
export const webhookDataSchema = z.object({
  ...notificationDataFields,
  links: boundedRecord(httpUrlSchema),
});

/**
 * The `data` of a cluster event: the common fields plus `cluster` and a `links.replay` URL
 * (`{app_url}/sessions/<id>?t=<offset ms>`).
 *
 * @example
 * ```ts
 * clusterWebhookDataSchema.parse({ title: 'Video freezes', summary: '12 sessions', severity: 'high', counts: { sessions: 12 }, links: { replay: 'https://app.example.com/sessions/ses_01JD2S5V8Q8C4Y3K2W9T7N6M5H?t=5300' }, cluster: { id: 'cl_01JD2S5V8Q8C4Y3K2W9T7N6M5H', kind: 'webrtc_freeze', title: 'Video freezes', count24h: 12 } });
 * ```
 */
export const clusterWebhookDataSchema = z.object({
  ...notificationDataFields,
  links: z.object({ replay: httpUrlSchema }).catchall(httpUrlSchema),
  cluster: webhookClusterSchema,
});

const regressionShareSchema = z.object({
  /** Sessions with an error, or scored calls scoring below 60. */
  events: countSchema,
  /** Sessions, or scored calls. */
  total: countSchema,
  /** `events / total`, 0..1. */
  rate: z.number().min(0).max(1),
});

/**
 * The `data.regression` of a `release.regression` event: a release worse than the release first
 * seen before it in the same environment (`null`: sessions without one) on the share of sessions
 * with an error (`error_rate`) or of scored calls scoring below 60 (`call_quality`), by a
 * one-sided pooled two-proportion z-test (`z`, `pOneSided`) at level `alpha`, each release with
 * at least `minTotal` sessions or scored calls. Unknown fields are tolerated as the envelope's.
 * `webhookEventSchema` drops `data.regression` (a field it does not know): parse it from the body.
 *
 * @example
 * ```ts
 * const body = JSON.parse(rawBody);
 * if (webhookEventSchema.parse(body).type === 'release.regression') {
 *   const regression = releaseRegressionSchema.parse(body.data.regression);
 *   console.log(regression.release, regression.metric, regression.current.rate, regression.previous.rate);
 * }
 * ```
 */
export const releaseRegressionSchema = z.object({
  metric: z.enum(['error_rate', 'call_quality']),
  environment: boundedText().nullable(),
  release: boundedText(),
  previousRelease: boundedText(),
  current: regressionShareSchema,
  previous: regressionShareSchema,
  z: z.number(),
  pOneSided: z.number().min(0).max(1),
  alpha: z.number().min(0).max(1),
  minTotal: countSchema,
});

/**
 * The `data.regression` of a `release.regression` event.
 *
 * @example
 * ```ts
 * const worse = (regression: ReleaseRegression) => regression.current.rate - regression.previous.rate;
 * ```
 */
export type ReleaseRegression = z.infer<typeof releaseRegressionSchema>;

const vitalWindowSchema = z.object({
  /** The nearest-rank p75 of the window's page views that measured the vital. */
  p75: z.number().min(0),
  /** web.dev's rating of that p75. */
  rating: z.enum(['good', 'needs-improvement', 'poor']),
  /** Page views that measured it. */
  count: countSchema,
});

/**
 * The `data.regression` of a `vitals.regression` event: a route's p75 of a web vital over
 * `[middle, to)` (`current`) rated worse than over `[from, middle)` (`previous`), both windows with
 * at least `minPageViews` page views measuring it; `period` is the week (its Monday, UTC,
 * `YYYY-MM-DD`) it fires once for. Unknown fields are tolerated as the envelope's.
 *
 * @example
 * ```ts
 * const regression = vitalsRegressionSchema.parse(JSON.parse(rawBody).data.regression);
 * console.log(`${regression.metric} of ${regression.route}: ${regression.previous.rating} → ${regression.current.rating}`);
 * ```
 */
export const vitalsRegressionSchema = z.object({
  metric: z.enum(['LCP', 'INP', 'CLS', 'FCP', 'TTFB']),
  route: boundedText(PROTOCOL_LIMITS.maxUrlLength),
  period: z.iso.date(),
  from: z.iso.datetime(),
  middle: z.iso.datetime(),
  to: z.iso.datetime(),
  current: vitalWindowSchema,
  previous: vitalWindowSchema,
  minPageViews: countSchema,
});

/**
 * The `data.regression` of a `vitals.regression` event.
 *
 * @example
 * ```ts
 * const isPoor = (regression: VitalsRegression) => regression.current.rating === 'poor';
 * ```
 */
export type VitalsRegression = z.infer<typeof vitalsRegressionSchema>;

const envelopeFields = {
  id: idSchema('evt'),
  version: z.literal(WEBHOOK_VERSION),
  createdAt: z.iso.datetime(),
  orgId: idSchema('org'),
  projectId: idSchema('proj'),
};

/**
 * A webhook delivery body (PROTOCOL.md §6), discriminated on `type`: cluster events are checked
 * for `data.cluster` and `data.links.replay`. `createdAt` is ISO 8601 in UTC (`Z`). Unknown
 * fields are tolerated (and dropped by `parse`) so receivers keep working as payloads grow.
 *
 * @example
 * ```ts
 * import type { WebhookEvent } from '@svc/protocol';
 *
 * function handle(event: WebhookEvent) {
 *   if (event.type === 'cluster.created') console.log(event.data.cluster.title, event.data.links.replay);
 * }
 * ```
 */
export const webhookEventSchema = z.discriminatedUnion('type', [
  z.object({ ...envelopeFields, type: z.enum(CLUSTER_WEBHOOK_EVENT_TYPES), data: clusterWebhookDataSchema }),
  z.object({ ...envelopeFields, type: z.enum(OTHER_WEBHOOK_EVENT_TYPES), data: webhookDataSchema }),
]);

/**
 * A webhook delivery body.
 *
 * @example
 * ```ts
 * const isTest = (event: WebhookEvent) => event.type === 'notification.test';
 * ```
 */
export type WebhookEvent = z.infer<typeof webhookEventSchema>;
