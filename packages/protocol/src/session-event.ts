import { z } from 'zod';
import { CALL_EVENT_NAMES, type CallEventName, callEventSchema } from './call-event.ts';
import { callSampleSchema } from './call-sample.ts';
import {
  customEventSchema,
  errorEventSchema,
  gapEventSchema,
  governorEventSchema,
  identifyEventSchema,
  navEventSchema,
  requestEventSchema,
  rrwebEventSchema,
  triggerEventSchema,
  vitalEventSchema,
} from './events.ts';
import { withJsonSchemaKeywords } from './json-schema-keywords.ts';
import { boundedText, timestampSchema } from './scalars.ts';

/**
 * The event types protocol v1 knows (PROTOCOL.md §1). An event with any other `type` is
 * skipped by {@link parseChunk}, not failed.
 *
 * @example
 * ```ts
 * import { WIRE_EVENT_TYPES } from '@svc/protocol';
 *
 * WIRE_EVENT_TYPES.includes('call.sample'); // true
 * ```
 */
export const WIRE_EVENT_TYPES = [
  'rrweb',
  'nav',
  'error',
  'custom',
  'vital',
  'identify',
  'trigger',
  'gap',
  'governor',
  'request',
  'call.sample',
  'call.event',
] as const;

/**
 * A known event type.
 *
 * @example
 * ```ts
 * const type: WireEventType = 'nav';
 * ```
 */
export type WireEventType = (typeof WIRE_EVENT_TYPES)[number];

const wireEventTypes = new Set<string>(WIRE_EVENT_TYPES);

/**
 * Whether `type` is one of {@link WIRE_EVENT_TYPES}.
 *
 * @example
 * ```ts
 * isWireEventType('nav'); // true
 * isWireEventType('network.request'); // false
 * ```
 */
export function isWireEventType(type: unknown): type is WireEventType {
  return typeof type === 'string' && wireEventTypes.has(type);
}

/**
 * Any event of a known type, discriminated on `type` (and, for `call.event`, on `name`).
 * A known type with bad fields fails.
 *
 * @example
 * ```ts
 * import { sessionEventSchema } from '@svc/protocol';
 *
 * const event = sessionEventSchema.parse({ t: 1763700000000, type: 'nav', url: 'https://app.example.com/' });
 * ```
 */
export const sessionEventSchema = z.discriminatedUnion('type', [
  rrwebEventSchema,
  navEventSchema,
  errorEventSchema,
  customEventSchema,
  vitalEventSchema,
  identifyEventSchema,
  triggerEventSchema,
  gapEventSchema,
  governorEventSchema,
  requestEventSchema,
  callSampleSchema,
  callEventSchema,
]);

/**
 * An event of a known type.
 *
 * @example
 * ```ts
 * function timeOf(event: SessionEvent): number {
 *   return event.t;
 * }
 * ```
 */
export type SessionEvent = z.infer<typeof sessionEventSchema>;

/**
 * An event of a type this protocol version does not know, sent by a newer SDK: an object with a
 * timestamp `t` and a `type` string (1..256 characters) that is not in
 * {@link WIRE_EVENT_TYPES}. Other fields are kept as sent. {@link parseChunk} skips such events
 * and reports them.
 *
 * @example
 * ```ts
 * unknownEventSchema.parse({ t: 1763700000000, type: 'network.request', method: 'GET' }); // ok
 * unknownEventSchema.safeParse({ t: 1763700000000, type: 'nav' }).success; // false: a known type
 * ```
 */
export const unknownEventSchema = z.looseObject({
  t: timestampSchema,
  type: withJsonSchemaKeywords(
    boundedText().refine((type) => !wireEventTypes.has(type), {
      message: 'A known event type must match its schema',
    }),
    { not: { enum: [...WIRE_EVENT_TYPES] } },
  ),
});

/**
 * An event of an unknown type.
 *
 * @example
 * ```ts
 * const describe = (event: UnknownEvent) => `${event.type} at ${event.t}`;
 * ```
 */
export type UnknownEvent = z.infer<typeof unknownEventSchema>;

const callEventNames = new Set<string>(CALL_EVENT_NAMES);

/**
 * Whether `name` is one of the call event names protocol v1 knows ({@link CALL_EVENT_NAMES}).
 *
 * @example
 * ```ts
 * isCallEventName('ice_restart'); // true
 * isCallEventName('bandwidth_probe'); // false: skipped by parseChunk
 * ```
 */
export function isCallEventName(name: unknown): name is CallEventName {
  return typeof name === 'string' && callEventNames.has(name);
}

/**
 * A `call.event` with a `name` this protocol version does not know, sent by a newer SDK: an
 * object with a timestamp `t`, `type: 'call.event'` and a `name` string (1..256 characters) that
 * is not in {@link CALL_EVENT_NAMES}. Other fields are kept as sent. Like an
 * {@link UnknownEvent}, {@link parseChunk} skips it and reports it, so adding a call event is
 * an additive change that older servers survive.
 *
 * @example
 * ```ts
 * unknownCallEventSchema.parse({ t: 1763700000000, type: 'call.event', name: 'bandwidth_probe' }); // ok
 * unknownCallEventSchema.safeParse({ t: 1763700000000, type: 'call.event', name: 'ice_restart' }).success; // false
 * ```
 */
export const unknownCallEventSchema = z.looseObject({
  t: timestampSchema,
  type: z.literal('call.event'),
  name: withJsonSchemaKeywords(
    boundedText().refine((name) => !callEventNames.has(name), {
      message: 'A known call event name must match its schema',
    }),
    { not: { enum: [...CALL_EVENT_NAMES] } },
  ),
});

/**
 * A call event of an unknown name.
 *
 * @example
 * ```ts
 * const describe = (event: UnknownCallEvent) => `${event.name} at ${event.t}`;
 * ```
 */
export type UnknownCallEvent = z.infer<typeof unknownCallEventSchema>;

/**
 * What a chunk's `events` array may hold on the wire: a known event, an event of an unknown
 * type, or a call event of an unknown name.
 *
 * @example
 * ```ts
 * wireEventSchema.parse({ t: 1763700000000, type: 'network.request' }); // ok: tolerated
 * wireEventSchema.parse({ t: 1763700000000, type: 'call.event', name: 'bandwidth_probe' }); // ok: tolerated
 * ```
 */
export const wireEventSchema = z.union([sessionEventSchema, unknownEventSchema, unknownCallEventSchema]);

/**
 * Whether a wire event is one protocol v1 knows (a known type and, for `call.event`, a known
 * name), as opposed to one that {@link parseChunk} skips.
 *
 * @example
 * ```ts
 * isKnownEvent({ t: 1763700000000, type: 'nav', url: '/' }); // true
 * isKnownEvent({ t: 1763700000000, type: 'network.request' }); // false
 * ```
 */
export function isKnownEvent(event: SessionEvent | UnknownEvent | UnknownCallEvent): event is SessionEvent {
  if (!isWireEventType(event.type)) return false;
  return event.type !== 'call.event' || isCallEventName((event as { name?: unknown }).name);
}
