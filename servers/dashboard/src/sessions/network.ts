import type { FlatEvent } from '../replay/types.ts';

// The network panel's model: the session's `request` events (packages/protocol, events.ts) as
// rows in time order, their filters, the row at the player's time; and a trace tree of
// `GET /v1/sessions/{id}/traces` (servers/api, modules/traces/trees.ts) flattened into the
// waterfall's rows.

/** One `fetch` or `XMLHttpRequest` of the recorded page. */
export interface NetworkRequest {
  /** `seq:index` of the event: unique within the session. */
  key: string;
  /** Milliseconds from the session's start to the request's start. */
  offset: number;
  initiator: 'fetch' | 'xhr';
  method: string;
  url: string;
  status?: number;
  durationMs: number;
  requestBytes?: number;
  responseBytes?: number;
  /** Why no answer came: `network`, `abort`, `timeout`. */
  failure?: string;
  traceId?: string;
  /** No answer, or an answer of 400 or more. */
  failed: boolean;
}

export type NetworkFilter = 'all' | 'failed' | 'fetch' | 'xhr';

export const NETWORK_FILTERS: Record<NetworkFilter, string> = {
  all: 'All',
  failed: 'Failed',
  fetch: 'Fetch',
  xhr: 'XHR',
};

const text = (value: unknown): string | undefined =>
  typeof value === 'string' && value !== '' ? value : undefined;
const count = (value: unknown): number | undefined =>
  typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value : undefined;

/**
 * The session's requests from the events of `GET /v1/sessions/{id}/events`, by start time (other
 * events are left out).
 *
 * @example
 * ```ts
 * const rows = requestsOf(events, Date.parse(session.startedAt));
 * rows.filter((row) => row.failed).length;
 * ```
 */
export function requestsOf(events: FlatEvent[], start: number): NetworkRequest[] {
  const rows: NetworkRequest[] = [];
  for (const { seq, index, event } of events) {
    if (event.type !== 'request') continue;
    const status = count(event.status);
    const failure = text(event.failure);
    rows.push({
      key: `${seq}:${index}`,
      offset: Math.max(0, event.t - start),
      initiator: event.initiator === 'xhr' ? 'xhr' : 'fetch',
      method: text(event.method) ?? 'GET',
      url: text(event.url) ?? '',
      status,
      durationMs: count(event.durationMs) ?? 0,
      requestBytes: count(event.requestBytes),
      responseBytes: count(event.responseBytes),
      failure,
      traceId: text(event.traceId),
      failed: status === undefined || status >= 400,
    });
  }
  return rows.sort((left, right) => left.offset - right.offset || left.key.localeCompare(right.key));
}

/**
 * The rows a filter keeps.
 *
 * @example
 * ```ts
 * filterRequests(rows, 'failed');
 * ```
 */
export function filterRequests(rows: NetworkRequest[], filter: NetworkFilter): NetworkRequest[] {
  switch (filter) {
    case 'failed':
      return rows.filter((row) => row.failed);
    case 'fetch':
    case 'xhr':
      return rows.filter((row) => row.initiator === filter);
    default:
      return rows;
  }
}

/**
 * The row at the player's time: the last request started at or before `offset`.
 *
 * @example
 * ```ts
 * currentRequest(rows, 12_000)?.key;
 * ```
 */
export function currentRequest(rows: NetworkRequest[], offset: number): NetworkRequest | undefined {
  let current: NetworkRequest | undefined;
  for (const row of rows) {
    if (row.offset > offset) break;
    current = row;
  }
  return current;
}

/**
 * The outcome in words (a failure is never told by colour alone): the status, `Failed:` before
 * an error status or the reason no answer came.
 *
 * @example
 * ```ts
 * outcomeOf(row); // "200", "Failed: 404", "Failed: no answer (network)"
 * ```
 */
export function outcomeOf(row: NetworkRequest): string {
  if (row.status === undefined) return `Failed: no answer (${row.failure ?? 'unknown'})`;
  return row.failed ? `Failed: ${row.status}` : String(row.status);
}

/**
 * A size in bytes as people read it.
 *
 * @example
 * ```ts
 * formatBytes(2048); // "2.0 KB"
 * ```
 */
export function formatBytes(bytes: number | undefined): string {
  if (bytes === undefined) return '–';
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}

// The answer of GET /v1/sessions/{id}/traces.

export interface SpanNode {
  spanId: string;
  parentSpanId: string | null;
  name: string;
  kind: string;
  service: string | null;
  startTime: string;
  endTime: string;
  durationMs: number;
  status: { code: 'unset' | 'ok' | 'error'; message: string | null };
  attributes: Record<string, unknown>;
  children: SpanNode[];
}

export interface TraceLog {
  time: string;
  spanId: string | null;
  severityNumber: number;
  severityText: string | null;
  body: string | null;
  service: string | null;
  attributes: Record<string, unknown>;
}

export interface TraceTree {
  traceId: string;
  startTime: string;
  durationMs: number;
  spanCount: number;
  errorCount: number;
  roots: SpanNode[];
  logs: TraceLog[];
}

/** One row of the waterfall. */
export interface WaterfallRow {
  span: SpanNode;
  /** 1 for a root (as `aria-level`). */
  level: number;
  /** The span's start and length as fractions (0 to 1) of the trace's duration. */
  start: number;
  width: number;
  /** Milliseconds from the trace's start. */
  offsetMs: number;
  hasChildren: boolean;
  expanded: boolean;
  /** The parent's span id, undefined for a root. */
  parent?: string;
}

/**
 * The waterfall's rows: every span in tree order (depth first, children by start time), less
 * those under a collapsed span, with its bar's start and width relative to the trace.
 *
 * @example
 * ```ts
 * const rows = waterfallRows(tree, new Set()); // everything expanded
 * rows.map((row) => `${'  '.repeat(row.level - 1)}${row.span.name}`);
 * ```
 */
export function waterfallRows(tree: TraceTree, collapsed: ReadonlySet<string>): WaterfallRow[] {
  const traceStart = Date.parse(tree.startTime);
  const total = Math.max(tree.durationMs, 1);
  const clamp = (value: number) => Math.min(1, Math.max(0, value));
  const rows: WaterfallRow[] = [];
  const visit = (span: SpanNode, level: number, parent: string | undefined) => {
    const offsetMs = Math.max(0, Date.parse(span.startTime) - traceStart);
    const start = clamp(offsetMs / total);
    const expanded = !collapsed.has(span.spanId);
    rows.push({
      span,
      level,
      start,
      width: Math.min(clamp(span.durationMs / total), 1 - start),
      offsetMs,
      hasChildren: span.children.length > 0,
      expanded,
      parent,
    });
    if (expanded) for (const child of span.children) visit(child, level + 1, span.spanId);
  };
  for (const root of tree.roots) visit(root, 1, undefined);
  return rows;
}

/**
 * Every span of a tree, depth first.
 *
 * @example
 * ```ts
 * allSpans(tree).find((span) => span.spanId === selected);
 * ```
 */
export function allSpans(tree: TraceTree): SpanNode[] {
  const spans: SpanNode[] = [];
  const visit = (span: SpanNode) => {
    spans.push(span);
    for (const child of span.children) visit(child);
  };
  for (const root of tree.roots) visit(root);
  return spans;
}
