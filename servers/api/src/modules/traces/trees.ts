import type { Selectable } from 'kysely';
import { z } from 'zod';
import type { LogRecordsTable, Span } from '../../platform/database/tables/traces.table.ts';

const SPAN_KINDS = ['unspecified', 'internal', 'server', 'client', 'producer', 'consumer'] as const;
const STATUS_CODES = ['unset', 'ok', 'error'] as const;

interface SpanNode {
  spanId: string;
  parentSpanId: string | null;
  name: string;
  kind: (typeof SPAN_KINDS)[number];
  service: string | null;
  startTime: string;
  endTime: string;
  durationMs: number;
  status: { code: (typeof STATUS_CODES)[number]; message: string | null };
  attributes: Record<string, unknown>;
  children: SpanNode[];
}

const spanNodeSchema: z.ZodType<SpanNode> = z.object({
  spanId: z.string(),
  parentSpanId: z.string().nullable().describe('null for a root span'),
  name: z.string(),
  kind: z.enum(SPAN_KINDS),
  service: z.string().nullable().describe("The resource's service.name"),
  startTime: z.string(),
  endTime: z.string(),
  durationMs: z.number(),
  status: z.object({ code: z.enum(STATUS_CODES), message: z.string().nullable() }),
  attributes: z.record(z.string(), z.unknown()),
  get children() {
    return z.array(spanNodeSchema);
  },
});

const traceLogSchema = z.object({
  time: z.string(),
  spanId: z.string().nullable(),
  severityNumber: z.int(),
  severityText: z.string().nullable(),
  body: z.string().nullable(),
  service: z.string().nullable(),
  attributes: z.record(z.string(), z.unknown()),
});

const traceTreeSchema = z.object({
  traceId: z.string(),
  startTime: z.string(),
  durationMs: z.number().describe('From the earliest start to the latest end of its spans'),
  spanCount: z.int(),
  errorCount: z.int().describe('Spans with status error'),
  roots: z
    .array(spanNodeSchema)
    .describe('Spans without a parent, or whose parent was not received, by start time'),
  logs: z.array(traceLogSchema),
});

export const sessionTracesSchema = z.object({ items: z.array(traceTreeSchema) });

export type TraceTree = z.infer<typeof traceTreeSchema>;

function parseObject(text: string): Record<string, unknown> {
  const value: unknown = JSON.parse(text);
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : {};
}

/**
 * Trace trees from stored spans and log records: spans nested under their parents (a span whose
 * parent never arrived is a root), children by start time, traces by their first span's start.
 *
 * @example
 * ```ts
 * const trees = buildTraceTrees(spans, logs);
 * trees[0]?.roots[0]?.children.length;
 * ```
 */
export function buildTraceTrees(
  spans: readonly Span[],
  logs: readonly Selectable<LogRecordsTable>[],
): TraceTree[] {
  const byTrace = new Map<string, Span[]>();
  for (const span of spans) {
    const list = byTrace.get(span.trace_id) ?? [];
    list.push(span);
    byTrace.set(span.trace_id, list);
  }
  const trees: TraceTree[] = [];
  for (const [traceId, traceSpans] of byTrace) {
    traceSpans.sort((a, b) => a.start_time.getTime() - b.start_time.getTime());
    const nodes = new Map<string, SpanNode>();
    for (const span of traceSpans) {
      nodes.set(span.span_id, {
        spanId: span.span_id,
        parentSpanId: span.parent_span_id,
        name: span.name,
        kind: SPAN_KINDS[span.kind] ?? 'unspecified',
        service: span.service,
        startTime: span.start_time.toISOString(),
        endTime: span.end_time.toISOString(),
        durationMs: span.duration_ms,
        status: { code: STATUS_CODES[span.status_code] ?? 'unset', message: span.status_message },
        attributes: parseObject(span.attributes),
        children: [],
      });
    }
    const roots: SpanNode[] = [];
    for (const node of nodes.values()) {
      const parent =
        node.parentSpanId === null || node.parentSpanId === node.spanId
          ? undefined
          : nodes.get(node.parentSpanId);
      if (parent === undefined) roots.push(node);
      else parent.children.push(node);
    }
    const start = Math.min(...traceSpans.map((span) => span.start_time.getTime()));
    const end = Math.max(...traceSpans.map((span) => span.start_time.getTime() + span.duration_ms));
    trees.push({
      traceId,
      startTime: new Date(start).toISOString(),
      durationMs: end - start,
      spanCount: traceSpans.length,
      errorCount: traceSpans.filter((span) => span.status_code === 2).length,
      roots,
      logs: logs
        .filter((log) => log.trace_id === traceId)
        .map((log) => ({
          time: log.time.toISOString(),
          spanId: log.span_id,
          severityNumber: log.severity_number,
          severityText: log.severity_text,
          body: log.body,
          service: log.service,
          attributes: parseObject(log.attributes),
        })),
    });
  }
  return trees.sort((a, b) => a.startTime.localeCompare(b.startTime));
}
