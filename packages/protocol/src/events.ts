import { z } from 'zod';
import { PROTOCOL_LIMITS } from './limits.ts';
import { boundedRecord, boundedText, severitySchema, timestampSchema } from './scalars.ts';
import { userSchema } from './session-meta.ts';

/**
 * An `rrweb` event: `data` is one rrweb event, opaque to the server except for its numeric
 * `type`. Everything inside `data` is kept as sent (rrweb itself uses `null`, so the
 * no-`null` rule does not reach inside it).
 *
 * @example
 * ```ts
 * rrwebEventSchema.parse({ t: 1763700000000, type: 'rrweb', data: { type: 4, data: { href: 'https://example.com', width: 1280, height: 720 }, timestamp: 1763700000000 } });
 * ```
 */
export const rrwebEventSchema = z.object({
  t: timestampSchema,
  type: z.literal('rrweb'),
  data: z.looseObject({ type: z.int().min(0).max(255) }),
});

/**
 * An `rrweb` event.
 *
 * @example
 * ```ts
 * const isFullSnapshot = (event: RrwebEvent) => event.data.type === 2;
 * ```
 */
export type RrwebEvent = z.infer<typeof rrwebEventSchema>;

/**
 * A `nav` event: the page (or screen) changed to `url`, with the app's `route` pattern when known.
 * `load: true` marks a page load (a document navigation or reload, sent as the SDK starts on the
 * page); without it the app changed its URL itself (history API, hash).
 *
 * @example
 * ```ts
 * navEventSchema.parse({ t: 1763700000000, type: 'nav', url: 'https://app.example.com/calls/42', route: '/calls/:id' });
 * navEventSchema.parse({ t: 1763700000000, type: 'nav', url: 'https://app.example.com/', load: true });
 * ```
 */
export const navEventSchema = z.object({
  t: timestampSchema,
  type: z.literal('nav'),
  url: boundedText(PROTOCOL_LIMITS.maxUrlLength),
  route: boundedText(PROTOCOL_LIMITS.maxUrlLength).optional(),
  load: z.literal(true).optional(),
});

/**
 * A `nav` event.
 *
 * @example
 * ```ts
 * const event: NavEvent = { t: 1763700000000, type: 'nav', url: 'https://app.example.com/' };
 * ```
 */
export type NavEvent = z.infer<typeof navEventSchema>;

/**
 * An `error` event. `message` may be empty (a thrown `new Error()` has none).
 *
 * @example
 * ```ts
 * errorEventSchema.parse({ t: 1763700000000, type: 'error', message: 'x is undefined', name: 'TypeError', source: 'onerror' });
 * ```
 */
export const errorEventSchema = z.object({
  t: timestampSchema,
  type: z.literal('error'),
  message: z.string().max(PROTOCOL_LIMITS.maxMessageLength),
  name: boundedText().optional(),
  stack: boundedText(PROTOCOL_LIMITS.maxStackLength).optional(),
  source: z.enum(['onerror', 'unhandledrejection', 'console', 'manual']),
});

/**
 * An `error` event.
 *
 * @example
 * ```ts
 * const event: ErrorEvent = { t: 1763700000000, type: 'error', message: 'boom', source: 'manual' };
 * ```
 */
export type ErrorEvent = z.infer<typeof errorEventSchema>;

/**
 * A `custom` event: the SDK `track()` call. `props` is a flat object of at most
 * `PROTOCOL_LIMITS.maxProperties` string, number or boolean values.
 *
 * @example
 * ```ts
 * customEventSchema.parse({ t: 1763700000000, type: 'custom', name: 'checkout_failed', props: { step: 3, card: 'visa' }, severity: 'high' });
 * ```
 */
export const customEventSchema = z.object({
  t: timestampSchema,
  type: z.literal('custom'),
  name: boundedText(),
  props: boundedRecord(
    z.union([z.string().max(PROTOCOL_LIMITS.maxPropertyValueLength), z.number(), z.boolean()]),
  ).optional(),
  severity: severitySchema.optional(),
});

/**
 * A `custom` event.
 *
 * @example
 * ```ts
 * const event: CustomEvent = { t: 1763700000000, type: 'custom', name: 'signup' };
 * ```
 */
export type CustomEvent = z.infer<typeof customEventSchema>;

/**
 * A `vital` event: one web vital (`LCP` | `INP` | `CLS` | `FCP` | `TTFB`) with its value
 * (milliseconds, or unitless for `CLS`) and its web-vitals `rating`.
 *
 * @example
 * ```ts
 * vitalEventSchema.parse({ t: 1763700000000, type: 'vital', name: 'LCP', value: 1840, rating: 'good' });
 * ```
 */
export const vitalEventSchema = z.object({
  t: timestampSchema,
  type: z.literal('vital'),
  name: z.enum(['LCP', 'INP', 'CLS', 'FCP', 'TTFB']),
  value: z.number().min(0).max(PROTOCOL_LIMITS.maxDurationMs),
  rating: z.enum(['good', 'needs-improvement', 'poor']),
});

/**
 * A `vital` event.
 *
 * @example
 * ```ts
 * const event: VitalEvent = { t: 1763700000000, type: 'vital', name: 'CLS', value: 0.02, rating: 'good' };
 * ```
 */
export type VitalEvent = z.infer<typeof vitalEventSchema>;

/**
 * An `identify` event: the app identified the end user.
 *
 * @example
 * ```ts
 * identifyEventSchema.parse({ t: 1763700000000, type: 'identify', user: { id: 'u_42', name: 'Ada' } });
 * ```
 */
export const identifyEventSchema = z.object({
  t: timestampSchema,
  type: z.literal('identify'),
  user: userSchema,
});

/**
 * An `identify` event.
 *
 * @example
 * ```ts
 * const event: IdentifyEvent = { t: 1763700000000, type: 'identify', user: { id: 'u_42' } };
 * ```
 */
export type IdentifyEvent = z.infer<typeof identifyEventSchema>;

/**
 * A `trigger` event: why a conditional or monitor-mode recording was kept (e.g. `webrtc:freeze`).
 *
 * @example
 * ```ts
 * triggerEventSchema.parse({ t: 1763700000000, type: 'trigger', name: 'webrtc:freeze' });
 * ```
 */
export const triggerEventSchema = z.object({
  t: timestampSchema,
  type: z.literal('trigger'),
  name: boundedText(),
});

/**
 * A `trigger` event.
 *
 * @example
 * ```ts
 * const event: TriggerEvent = { t: 1763700000000, type: 'trigger', name: 'webrtc:one_way_media' };
 * ```
 */
export type TriggerEvent = z.infer<typeof triggerEventSchema>;

/**
 * A `gap` event: the SDK knowingly recorded nothing from `fromT` to `toT`.
 *
 * @example
 * ```ts
 * gapEventSchema.parse({ t: 1763700030000, type: 'gap', fromT: 1763700010000, toT: 1763700030000, reason: 'hidden' });
 * ```
 */
export const gapEventSchema = z.object({
  t: timestampSchema,
  type: z.literal('gap'),
  fromT: timestampSchema,
  toT: timestampSchema,
  reason: z.enum(['survival', 'hidden', 'offline', 'monitor', 'overflow']),
});

/**
 * A `gap` event.
 *
 * @example
 * ```ts
 * const lengthMs = (gap: GapEvent) => gap.toT - gap.fromT;
 * ```
 */
export type GapEvent = z.infer<typeof gapEventSchema>;

/**
 * The recorder governor's levels, healthiest first.
 *
 * @example
 * ```ts
 * governorLevelSchema.parse('constrained');
 * ```
 */
export const governorLevelSchema = z.enum(['healthy', 'constrained', 'degraded', 'survival']);

/**
 * A governor level: `healthy` | `constrained` | `degraded` | `survival`.
 *
 * @example
 * ```ts
 * const level: GovernorLevel = 'degraded';
 * ```
 */
export type GovernorLevel = z.infer<typeof governorLevelSchema>;

/**
 * A `governor` event, emitted on every change of the recorder governor's level.
 *
 * @example
 * ```ts
 * governorEventSchema.parse({ t: 1763700000000, type: 'governor', level: 'constrained' });
 * ```
 */
export const governorEventSchema = z.object({
  t: timestampSchema,
  type: z.literal('governor'),
  level: governorLevelSchema,
});

/**
 * A `governor` event.
 *
 * @example
 * ```ts
 * const event: GovernorEvent = { t: 1763700000000, type: 'governor', level: 'healthy' };
 * ```
 */
export type GovernorEvent = z.infer<typeof governorEventSchema>;

/**
 * A `request` event: a `fetch` or `XMLHttpRequest` of the page, as the browser SDK records it
 * when it ends. `url` is the absolute URL without query string or fragment; `t` is when the
 * request started. `status` is the HTTP status, absent when the request failed without a
 * response (`failure`: `network`, `abort` or `timeout`). Sizes are bytes when the browser tells
 * them (a request body's, a response's `content-length`). `traceId` (32 lowercase hex digits) is
 * the W3C trace id the SDK put in the request's `traceparent` header, for URLs of the SDK's
 * `tracePropagationTargets`. Bodies and headers are never recorded.
 *
 * @example
 * ```ts
 * requestEventSchema.parse({ t: 1763700000000, type: 'request', initiator: 'fetch', method: 'POST', url: 'https://api.example.com/cart', status: 500, durationMs: 84 });
 * ```
 */
export const requestEventSchema = z.object({
  t: timestampSchema,
  type: z.literal('request'),
  initiator: z.enum(['fetch', 'xhr']),
  method: boundedText(16),
  url: boundedText(PROTOCOL_LIMITS.maxUrlLength),
  status: z.int().min(0).max(999).optional(),
  durationMs: z.int().min(0).max(PROTOCOL_LIMITS.maxDurationMs),
  requestBytes: z.int().min(0).optional(),
  responseBytes: z.int().min(0).optional(),
  failure: z.enum(['network', 'abort', 'timeout']).optional(),
  traceId: z
    .string()
    .regex(/^[0-9a-f]{32}$/)
    .optional(),
});

/**
 * A `request` event.
 *
 * @example
 * ```ts
 * const failed = (event: RequestEvent) => event.failure !== undefined || (event.status ?? 0) >= 500;
 * ```
 */
export type RequestEvent = z.infer<typeof requestEventSchema>;
