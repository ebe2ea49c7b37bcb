import {
  type Chunk,
  higherSeverity,
  type SessionEvent,
  type Severity,
  type SkippedEvent,
  type User,
} from '@svc/protocol';
import type { SignalKind } from '../../platform/database/tables/session-signals.table.ts';

/** A signal found in a chunk's events (a `session_signals` row without its place). */
interface ChunkSignal {
  /** Position of the event in the chunk's `events` array as sent (unknown events included). */
  eventIndex: number;
  t: number;
  kind: SignalKind;
  /** Undefined only for a `custom` event sent without a severity. */
  severity: Severity | undefined;
  name: string;
  message: string | null;
  details: Record<string, unknown>;
}

/** rrweb's event type of a full snapshot (rrweb `EventType.FullSnapshot`). */
const RRWEB_FULL_SNAPSHOT = 2;

/** What one chunk contributes to its session. */
export interface ChunkSummary {
  /** Events of known types. */
  eventCount: number;
  /** `call.sample` and `call.event` items: processing reads the chunk again when there are any. */
  callItemCount: number;
  /**
   * The chunk brings session facts that calls copy (`meta`: browser, OS, device, release; an
   * `identify`: the user): the session's calls are processed again when it has any.
   */
  refreshesCalls: boolean;
  /** Earliest and latest event time (`undefined` without events). */
  firstEventAt?: number;
  lastEventAt?: number;
  /**
   * Where the session starts as far as this chunk knows: the earliest of `meta.startedAt` and
   * the first event (`sentAt` when it has neither).
   */
  sessionStart: number;
  /** The latest moment this chunk shows the session alive: its last event, else `sessionStart`. */
  sessionEnd: number;
  signals: ChunkSignal[];
  errorCount: number;
  /** `custom` events (SDK `track()` calls): processing matches them against custom rules. */
  customCount: number;
  /** rrweb full snapshots: the archiving of assets reads the chunk when there are any. */
  fullSnapshotCount: number;
  /** The highest severity of `signals`. */
  level?: Severity;
  /** The user: the last `identify` event of the chunk, else `meta.user`. */
  user?: { source: 'identify' | 'meta'; user: User };
}

/**
 * The signal an event raises, if any: errors, custom events, gaps, triggers, and requests that
 * carried a trace (`traceparent`), by which the session's OpenTelemetry traces are found.
 */
function signalOf(event: SessionEvent, eventIndex: number): ChunkSignal | undefined {
  switch (event.type) {
    case 'error':
      return {
        eventIndex,
        t: event.t,
        kind: 'error',
        severity: 'high',
        name: event.name ?? 'Error',
        message: event.message,
        details: { source: event.source, ...(event.stack === undefined ? {} : { stack: event.stack }) },
      };
    case 'custom':
      // Every `track()` is a signal (custom notification rules match them); only one with a
      // severity counts toward the session's level.
      return {
        eventIndex,
        t: event.t,
        kind: 'custom',
        severity: event.severity,
        name: event.name,
        message: null,
        details: event.props === undefined ? {} : { props: event.props },
      };
    case 'gap':
      return {
        eventIndex,
        t: event.t,
        kind: 'gap',
        severity: 'info',
        name: event.reason,
        message: null,
        details: { fromT: event.fromT, toT: event.toT, reason: event.reason },
      };
    case 'trigger':
      return {
        eventIndex,
        t: event.t,
        kind: 'trigger',
        severity: 'info',
        name: event.name,
        message: null,
        details: {},
      };
    case 'request':
      // No severity: a traced request links the session to its trace; it is not a problem.
      return event.traceId === undefined
        ? undefined
        : {
            eventIndex,
            t: event.t,
            kind: 'trace',
            severity: undefined,
            name: event.traceId,
            message: null,
            details: {
              initiator: event.initiator,
              method: event.method,
              url: event.url,
              durationMs: event.durationMs,
              ...(event.status === undefined ? {} : { status: event.status }),
              ...(event.failure === undefined ? {} : { failure: event.failure }),
            },
          };
    default:
      return undefined;
  }
}

/**
 * What a validated chunk contributes to its session: its time range, signals, error count, level
 * and user. `skipped` (from `parseChunk`) maps the known events back to their positions in the
 * chunk as sent, so a signal's `eventIndex` points into the stored bytes.
 *
 * @example
 * ```ts
 * const result = parseChunk(JSON.parse(text));
 * if (result.success) summarizeChunk(result.chunk, result.skipped).signals;
 * ```
 */
export function summarizeChunk(chunk: Chunk, skipped: readonly SkippedEvent[]): ChunkSummary {
  const skippedIndexes = new Set(skipped.map((event) => event.index));
  const signals: ChunkSignal[] = [];
  let originalIndex = 0;
  let firstEventAt: number | undefined;
  let lastEventAt: number | undefined;
  let identified: User | undefined;
  let callItemCount = 0;
  let fullSnapshotCount = 0;
  for (const event of chunk.events) {
    if (event.type === 'call.sample' || event.type === 'call.event') callItemCount += 1;
    if (event.type === 'rrweb' && event.data.type === RRWEB_FULL_SNAPSHOT) fullSnapshotCount += 1;
    while (skippedIndexes.has(originalIndex)) originalIndex += 1;
    if (firstEventAt === undefined || event.t < firstEventAt) firstEventAt = event.t;
    if (lastEventAt === undefined || event.t > lastEventAt) lastEventAt = event.t;
    if (event.type === 'identify') identified = event.user;
    const signal = signalOf(event, originalIndex);
    if (signal !== undefined) signals.push(signal);
    originalIndex += 1;
  }

  const sessionStart = Math.min(
    chunk.meta?.startedAt ?? Number.POSITIVE_INFINITY,
    firstEventAt ?? chunk.sentAt,
  );
  const user =
    identified !== undefined
      ? { source: 'identify' as const, user: identified }
      : chunk.meta?.user !== undefined
        ? { source: 'meta' as const, user: chunk.meta.user }
        : undefined;
  return {
    eventCount: chunk.events.length,
    callItemCount,
    refreshesCalls: chunk.meta !== undefined || identified !== undefined,
    ...(firstEventAt === undefined ? {} : { firstEventAt }),
    ...(lastEventAt === undefined ? {} : { lastEventAt }),
    sessionStart,
    sessionEnd: Math.max(sessionStart, lastEventAt ?? sessionStart),
    signals,
    errorCount: signals.filter((signal) => signal.kind === 'error').length,
    customCount: signals.filter((signal) => signal.kind === 'custom').length,
    fullSnapshotCount,
    ...(signals.every((signal) => signal.severity === undefined)
      ? {}
      : {
          level: signals.reduce<Severity | undefined>(
            (level, signal) => higherSeverity(level, signal.severity),
            undefined,
          ),
        }),
    ...(user === undefined ? {} : { user }),
  };
}
