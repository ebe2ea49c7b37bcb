import { z } from 'zod';
import { idSchema } from './ids.ts';
import { withJsonSchemaKeywords } from './json-schema-keywords.ts';
import { PROTOCOL_LIMITS } from './limits.ts';
import { type DroppedField, repairSessionMeta } from './repair-session-meta.ts';
import { timestampSchema } from './scalars.ts';
import {
  isCallEventName,
  isKnownEvent,
  isWireEventType,
  type SessionEvent,
  sessionEventSchema,
  unknownCallEventSchema,
  unknownEventSchema,
  wireEventSchema,
} from './session-event.ts';
import { sessionMetaSchema } from './session-meta.ts';

const metaRequiredMessage = 'meta is required on the first chunk of a session (seq = 0)';

/**
 * The chunk as it travels: strict at the top level (unknown fields are rejected), `meta` required
 * when `seq = 0`, events of known types checked against their schemas and events of unknown types
 * tolerated. The JSON Schema gets the `meta` rule as `if`/`then`.
 */
const wireChunkSchema = withJsonSchemaKeywords(
  z
    .strictObject({
      v: z.literal(1),
      sessionId: idSchema('ses'),
      visitId: idSchema('vis').optional(),
      seq: z.int().min(0).max(PROTOCOL_LIMITS.maxCount),
      sentAt: timestampSchema,
      meta: sessionMetaSchema.optional(),
      events: z.array(wireEventSchema).max(PROTOCOL_LIMITS.maxEventsPerChunk),
    })
    .check((context) => {
      if (context.value.seq === 0 && context.value.meta === undefined) {
        context.issues.push({
          code: 'custom',
          message: metaRequiredMessage,
          path: ['meta'],
          input: context.value,
        });
      }
    }),
  {
    if: { properties: { seq: { const: 0 } }, required: ['seq'] },
    // biome-ignore lint/suspicious/noThenProperty: the JSON Schema `then` keyword, not a thenable
    then: { required: ['meta'] },
  },
);

/**
 * One chunk: the body of `POST /v1/ingest` (PROTOCOL.md §1). The input is the wire format (events
 * of unknown types are tolerated); the output drops those events, so `Chunk['events']` holds
 * only {@link SessionEvent}s. This schema is the contract a sender must meet (`meta` included);
 * use {@link parseChunk} on the server: it also reads the optional `meta` fields tolerantly,
 * reports what it skipped and dropped, and never throws.
 *
 * @example
 * ```ts
 * import { chunkSchema } from '@svc/protocol';
 *
 * const chunk = chunkSchema.parse(JSON.parse(body)); // throws a ZodError when invalid
 * ```
 */
export const chunkSchema = wireChunkSchema.transform((chunk) => ({
  ...chunk,
  events: chunk.events.filter(isKnownEvent),
}));

/**
 * A chunk after parsing: events of unknown types removed.
 *
 * @example
 * ```ts
 * const lastEventTime = (chunk: Chunk) => chunk.events.at(-1)?.t;
 * ```
 */
export type Chunk = z.output<typeof chunkSchema>;

/**
 * A chunk as sent, before parsing: `events` may hold {@link UnknownEvent}s.
 *
 * @example
 * ```ts
 * const body: ChunkInput = { v: 1, sessionId, seq: 1, sentAt: Date.now(), events: [] };
 * ```
 */
export type ChunkInput = z.input<typeof chunkSchema>;

/**
 * An event that {@link parseChunk} removed because protocol v1 does not know it: its position
 * in the original `events` array, its `type`, and for a `call.event` of an unknown name, its
 * `name`.
 *
 * @example
 * ```ts
 * const skipped: SkippedEvent = { index: 3, type: 'network.request' };
 * const skippedCallEvent: SkippedEvent = { index: 4, type: 'call.event', name: 'bandwidth_probe' };
 * ```
 */
export interface SkippedEvent {
  index: number;
  type: string;
  name?: string;
}

/**
 * One problem found in an input: a zod issue `code`, the `path` to the offending value (object
 * keys and array indexes) and a human-readable `message`.
 *
 * @example
 * ```ts
 * const issue: ProtocolIssue = { code: 'too_big', path: ['events', 3, 'tracks', 0, 'lossPct'], message: 'Too big: expected number to be <=100' };
 * ```
 */
export interface ProtocolIssue {
  code: string;
  path: Array<string | number>;
  message: string;
}

/**
 * Why a chunk was refused: a summary `message` and the `issues` (at most
 * {@link MAX_REPORTED_ISSUES}, the first ones found).
 *
 * @example
 * ```ts
 * reply.code(400).send({ error: result.error.message, code: 'invalid' });
 * ```
 */
export interface ChunkError {
  message: string;
  issues: ProtocolIssue[];
}

/**
 * The result of {@link parseChunk}. On success: the parsed `chunk`, the `skipped` events of
 * unknown types, the optional `meta` fields `dropped` because they were empty or malformed, and
 * `input`, the chunk as read: the value passed in when nothing was dropped, else a copy without
 * the dropped fields (everything else, unknown fields and events included, as sent). A server
 * stores `input`.
 *
 * @example
 * ```ts
 * const result: ParseChunkResult = parseChunk(body);
 * if (result.success) store(result.dropped.length === 0 ? bytes : JSON.stringify(result.input));
 * ```
 */
export type ParseChunkResult =
  | { success: true; chunk: Chunk; skipped: SkippedEvent[]; dropped: DroppedField[]; input: ChunkInput }
  | { success: false; error: ChunkError };

/**
 * Most issues a failed {@link parseChunk} reports (a chunk of 10 000 bad events would otherwise
 * produce a reply larger than the chunk).
 *
 * @example
 * ```ts
 * if (result.error.issues.length === MAX_REPORTED_ISSUES) log('issues truncated');
 * ```
 */
export const MAX_REPORTED_ISSUES = 100;

/**
 * Formats an issue path as a JavaScript-like accessor: `events[3].tracks[0].lossPct`.
 *
 * @example
 * ```ts
 * formatIssuePath(['events', 3, 'lossPct']); // 'events[3].lossPct'
 * formatIssuePath([]); // '(root)'
 * ```
 */
export function formatIssuePath(path: ReadonlyArray<string | number>): string {
  if (path.length === 0) return '(root)';
  return path
    .map((segment, index) =>
      typeof segment === 'number' ? `[${segment}]` : index === 0 ? segment : `.${segment}`,
    )
    .join('');
}

function toProtocolIssues(
  issues: readonly z.core.$ZodIssue[],
  prefix: Array<string | number>,
): ProtocolIssue[] {
  return issues.map((issue) => ({
    code: issue.code,
    path: [
      ...prefix,
      ...issue.path.map((segment) => (typeof segment === 'symbol' ? String(segment) : segment)),
    ],
    message: issue.message,
  }));
}

function eventAt(input: unknown, index: number): unknown {
  if (typeof input !== 'object' || input === null) return undefined;
  const events = (input as { events?: unknown }).events;
  return Array.isArray(events) ? events[index] : undefined;
}

/**
 * A failed event matches neither a known schema nor the unknown-event schema, and zod reports
 * only one branch of that union (not always the meant one). Replace the issues of each failed
 * event with the issues of the schema the event meant: the known schema when its `type` is
 * known, the unknown-event schema otherwise.
 */
function explainIssues(issues: readonly z.core.$ZodIssue[], input: unknown): ProtocolIssue[] {
  const explained = new Set<number>();
  return issues.flatMap((issue) => {
    const [first, index] = issue.path;
    if (first !== 'events' || typeof index !== 'number') return toProtocolIssues([issue], []);
    if (explained.has(index)) return [];
    explained.add(index);
    const event = eventAt(input, index);
    const { type, name } =
      typeof event === 'object' && event !== null ? (event as { type?: unknown; name?: unknown }) : {};
    const meantUnknownCallEvent = type === 'call.event' && typeof name === 'string' && !isCallEventName(name);
    const result = meantUnknownCallEvent
      ? unknownCallEventSchema.safeParse(event)
      : isWireEventType(type)
        ? sessionEventSchema.safeParse(event)
        : unknownEventSchema.safeParse(event);
    const eventIssues = issues.filter(
      (candidate) => candidate.path[0] === 'events' && candidate.path[1] === index,
    );
    return result.success
      ? toProtocolIssues(eventIssues, [])
      : toProtocolIssues(result.error.issues, ['events', index]);
  });
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The input with its `meta` read tolerantly (see {@link repairSessionMeta}). */
function repairInput(input: unknown): { input: unknown; dropped: DroppedField[] } {
  if (!isRecord(input) || !isRecord(input.meta)) return { input, dropped: [] };
  const { meta, dropped } = repairSessionMeta(input.meta);
  return dropped.length === 0 ? { input, dropped } : { input: { ...input, meta }, dropped };
}

/**
 * Parses an inflated ingest body as a tolerant reader. Never throws for bad input: returns
 * `{ success: true, chunk, skipped, dropped, input }` or
 * `{ success: false, error: { message, issues } }`.
 *
 * - `skipped` lists the events of unknown types (and `call.event`s of unknown names) removed
 *   from `chunk.events` (`{ index, type, name? }`, index into the original array).
 * - `dropped` lists the optional `meta` fields ({@link OPTIONAL_META_FIELDS}) that were empty or
 *   malformed and were removed instead of failing the chunk (`{ path: 'meta.os.version',
 *   reason, message }`); `input` is the chunk without them, what a server stores.
 *
 * Everything else is strict: a required `meta` field or an event of a known type with bad
 * fields fails the whole chunk. Events are not re-ordered and out-of-order `t` is not an error:
 * consumers sort stably by `t` when they need order.
 *
 * @example
 * ```ts
 * import { parseChunk } from '@svc/protocol';
 *
 * const result = parseChunk(JSON.parse(inflated));
 * if (!result.success) return reply.code(400).send({ error: result.error.message, code: 'invalid' });
 * for (const { index, type } of result.skipped) log.info({ index, type }, 'skipped an unknown event type');
 * for (const { path, reason } of result.dropped) log.info({ path, reason }, 'dropped an optional meta field');
 * await store(result.chunk);
 * ```
 */
export function parseChunk(received: unknown): ParseChunkResult {
  const { input, dropped } = repairInput(received);
  const result = wireChunkSchema.safeParse(input);
  if (!result.success) {
    const issues = explainIssues(result.error.issues, input);
    const [first] = issues;
    const summary = first === undefined ? '' : ` First: ${formatIssuePath(first.path)}: ${first.message}`;
    return {
      success: false,
      error: {
        message: `Invalid chunk: ${issues.length} issue${issues.length === 1 ? '' : 's'}.${summary}`,
        issues: issues.slice(0, MAX_REPORTED_ISSUES),
      },
    };
  }
  const events: SessionEvent[] = [];
  const skipped: SkippedEvent[] = [];
  result.data.events.forEach((event, index) => {
    if (isKnownEvent(event)) {
      events.push(event);
      return;
    }
    const { type, name } = event as { type: string; name?: unknown };
    skipped.push(type === 'call.event' && typeof name === 'string' ? { index, type, name } : { index, type });
  });
  return { success: true, chunk: { ...result.data, events }, skipped, dropped, input: input as ChunkInput };
}
