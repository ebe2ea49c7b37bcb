import { useQuery } from '@tanstack/react-query';
import { type KeyboardEvent, useMemo, useRef, useState } from 'react';
import { api } from '../api.ts';
import { formatDuration } from '../ui/format.ts';
import { QueryState } from '../ui/status.tsx';
import { useWorkspace } from '../ui/workspace.tsx';
import {
  allSpans,
  type NetworkRequest,
  type SpanNode,
  type TraceTree,
  type WaterfallRow,
  waterfallRows,
} from './network.ts';

export interface TraceWaterfallProps {
  sessionId: string;
  traceId: string;
  /** The request whose `traceparent` started the trace. */
  request: NetworkRequest;
}

const milliseconds = (value: number) => `${Math.round(value * 10) / 10} ms`;
const percent = (fraction: number) => `${(fraction * 100).toFixed(3)}%`;

function attributeValue(value: unknown): string {
  return typeof value === 'string' ? value : JSON.stringify(value);
}

/**
 * A request's OpenTelemetry trace (from `GET /v1/sessions/{id}/traces`): one treegrid row per
 * span, indented by depth, its bar placed by start and duration within the trace; the selected
 * span's attributes; the trace's logs.
 */
export function TraceWaterfall({ sessionId, traceId, request }: TraceWaterfallProps) {
  const { project } = useWorkspace();
  const traces = useQuery({
    queryKey: ['session-traces', project.id, sessionId],
    queryFn: () => api<{ items: TraceTree[] }>('GET', `/v1/sessions/${encodeURIComponent(sessionId)}/traces`),
  });
  return (
    <section className="trace-waterfall" aria-labelledby="trace-title">
      <h3 id="trace-title">
        Trace of {request.method} {request.url}
      </h3>
      <QueryState query={traces}>
        {(answer) => {
          const tree = answer.items.find((item) => item.traceId === traceId);
          return tree === undefined ? (
            <p>
              No span of trace <code>{traceId}</code> has been received: the service exports its spans with
              OpenTelemetry to <code>/v1/otlp/traces</code>.
            </p>
          ) : (
            <Waterfall key={traceId} tree={tree} />
          );
        }}
      </QueryState>
    </section>
  );
}

function Waterfall({ tree }: { tree: TraceTree }) {
  const [collapsed, setCollapsed] = useState<ReadonlySet<string>>(new Set());
  const spans = useMemo(() => allSpans(tree), [tree]);
  const [selected, setSelected] = useState<string | undefined>(tree.roots[0]?.spanId);
  const [focused, setFocused] = useState<string | undefined>(tree.roots[0]?.spanId);
  const rows = useMemo(() => waterfallRows(tree, collapsed), [tree, collapsed]);
  const body = useRef<HTMLTableSectionElement>(null);
  const traceStart = Date.parse(tree.startTime);
  const selectedSpan = spans.find((span) => span.spanId === selected);
  // Log records have no id: their place in the trace's list is theirs (the list never reorders).
  const logs = useMemo(() => tree.logs.map((log, place) => ({ key: `${place}`, log })), [tree]);
  const nameOf = (spanId: string | null) => spans.find((span) => span.spanId === spanId)?.name;
  // The row that takes Tab: the focused one while it is shown, else the first.
  const tabStop = rows.some((row) => row.span.spanId === focused) ? focused : rows[0]?.span.spanId;

  function toggle(spanId: string, expand: boolean) {
    setCollapsed((known) => {
      const next = new Set(known);
      if (expand) next.delete(spanId);
      else next.add(spanId);
      return next;
    });
  }

  function focus(spanId: string | undefined) {
    if (spanId === undefined) return;
    setFocused(spanId);
    body.current?.querySelector<HTMLElement>(`[data-span-id="${spanId}"]`)?.focus();
  }

  // The treegrid's keys (WAI-ARIA APG): ↑ ↓ Home End move, → opens or goes to the first child,
  // ← closes or goes to the parent, Enter and Space select.
  function onKeyDown(event: KeyboardEvent<HTMLTableRowElement>, row: WaterfallRow, index: number) {
    const id = row.span.spanId;
    switch (event.key) {
      case 'ArrowDown':
        focus(rows[index + 1]?.span.spanId);
        break;
      case 'ArrowUp':
        focus(rows[index - 1]?.span.spanId);
        break;
      case 'Home':
        focus(rows[0]?.span.spanId);
        break;
      case 'End':
        focus(rows.at(-1)?.span.spanId);
        break;
      case 'ArrowRight':
        if (row.hasChildren && !row.expanded) toggle(id, true);
        else if (row.hasChildren) focus(rows[index + 1]?.span.spanId);
        break;
      case 'ArrowLeft':
        if (row.hasChildren && row.expanded) toggle(id, false);
        else focus(row.parent);
        break;
      case 'Enter':
      case ' ':
        setSelected(id);
        break;
      default:
        return;
    }
    event.preventDefault();
  }

  return (
    <>
      <p className="trace-facts">
        <code>{tree.traceId}</code> · {tree.spanCount === 1 ? '1 span' : `${tree.spanCount} spans`} ·{' '}
        {formatDuration(tree.durationMs)}
        {tree.errorCount > 0 ? ` · ${tree.errorCount === 1 ? '1 error' : `${tree.errorCount} errors`}` : ''}
      </p>
      {/* biome-ignore lint/a11y/noNoninteractiveElementToInteractiveRole: a treegrid is a table whose rows nest and take focus (the WAI-ARIA APG's treegrid example is a table) */}
      <table className="waterfall" role="treegrid" aria-label={`Spans of trace ${tree.traceId}`}>
        <thead>
          <tr className="waterfall-head">
            <th scope="col">Span</th>
            <th scope="col">Service</th>
            <th scope="col">Status</th>
            <th scope="col">Duration</th>
            <th scope="col">Timeline ({milliseconds(tree.durationMs)})</th>
          </tr>
        </thead>
        <tbody ref={body}>
          {rows.map((row, index) => {
            const { span } = row;
            const failed = span.status.code === 'error';
            return (
              <tr
                key={span.spanId}
                data-span-id={span.spanId}
                data-level={row.level}
                className={failed ? 'waterfall-row waterfall-error' : 'waterfall-row'}
                aria-level={row.level}
                aria-expanded={row.hasChildren ? row.expanded : undefined}
                aria-selected={span.spanId === selected}
                tabIndex={span.spanId === tabStop ? 0 : -1}
                onFocus={() => setFocused(span.spanId)}
                onClick={() => setSelected(span.spanId)}
                onKeyDown={(event) => onKeyDown(event, row, index)}
              >
                <td className="waterfall-name" style={{ paddingLeft: `${0.5 + (row.level - 1) * 1.25}rem` }}>
                  {row.hasChildren ? (
                    <span
                      className="waterfall-toggle"
                      aria-hidden="true"
                      onClick={(event) => {
                        event.stopPropagation();
                        toggle(span.spanId, !row.expanded);
                      }}
                    >
                      {row.expanded ? '▾' : '▸'}
                    </span>
                  ) : (
                    <span className="waterfall-toggle" aria-hidden="true" />
                  )}
                  {span.name}
                </td>
                <td>{span.service ?? '–'}</td>
                <td className="waterfall-status">{statusText(span)}</td>
                <td>{milliseconds(span.durationMs)}</td>
                <td className="waterfall-timeline">
                  <span className="visually-hidden">starts at +{milliseconds(row.offsetMs)}</span>
                  <span className="waterfall-track" aria-hidden="true">
                    <span
                      className="waterfall-bar"
                      data-start={row.start.toFixed(4)}
                      data-width={row.width.toFixed(4)}
                      style={{ left: percent(row.start), width: percent(row.width) }}
                    />
                  </span>
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
      {selectedSpan === undefined ? null : (
        <section className="span-details" aria-label={`Span ${selectedSpan.name}`}>
          <h4>{selectedSpan.name}</h4>
          <dl>
            <dt>Service</dt>
            <dd>{selectedSpan.service ?? '–'}</dd>
            <dt>Kind</dt>
            <dd>{selectedSpan.kind}</dd>
            <dt>Starts</dt>
            <dd>+{milliseconds(Date.parse(selectedSpan.startTime) - traceStart)}</dd>
            <dt>Duration</dt>
            <dd>{milliseconds(selectedSpan.durationMs)}</dd>
            <dt>Status</dt>
            <dd>{statusText(selectedSpan)}</dd>
            <dt>Span id</dt>
            <dd>
              <code>{selectedSpan.spanId}</code>
            </dd>
          </dl>
          {Object.keys(selectedSpan.attributes).length === 0 ? (
            <p>No attributes.</p>
          ) : (
            <table className="span-attributes">
              <caption>Attributes</caption>
              <thead>
                <tr>
                  <th scope="col">Name</th>
                  <th scope="col">Value</th>
                </tr>
              </thead>
              <tbody>
                {Object.entries(selectedSpan.attributes).map(([name, value]) => (
                  <tr key={name}>
                    <th scope="row">{name}</th>
                    <td>{attributeValue(value)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
        </section>
      )}
      <h4 id="trace-logs-title">Logs</h4>
      {tree.logs.length === 0 ? (
        <p>No logs in this trace.</p>
      ) : (
        <table className="trace-logs" aria-labelledby="trace-logs-title">
          <thead>
            <tr>
              <th scope="col">At</th>
              <th scope="col">Severity</th>
              <th scope="col">Service</th>
              <th scope="col">Span</th>
              <th scope="col">Message</th>
            </tr>
          </thead>
          <tbody>
            {logs.map(({ key, log }) => (
              <tr key={key} className={log.severityNumber >= 17 ? 'trace-log-error' : undefined}>
                <td>+{milliseconds(Date.parse(log.time) - traceStart)}</td>
                <td>{log.severityText ?? severityName(log.severityNumber)}</td>
                <td>{log.service ?? '–'}</td>
                <td>{nameOf(log.spanId) ?? (log.spanId === null ? '–' : <code>{log.spanId}</code>)}</td>
                <td>{log.body ?? ''}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </>
  );
}

function statusText(span: SpanNode): string {
  if (span.status.code === 'error') return span.status.message ? `Error: ${span.status.message}` : 'Error';
  return span.status.code === 'ok' ? 'OK' : '–';
}

/** OpenTelemetry's severity ranges (logs data model): 1–4 TRACE … 21–24 FATAL. */
function severityName(severityNumber: number): string {
  const names = ['TRACE', 'DEBUG', 'INFO', 'WARN', 'ERROR', 'FATAL'];
  return severityNumber < 1
    ? 'UNSPECIFIED'
    : (names[Math.min(5, Math.floor((severityNumber - 1) / 4))] ?? '');
}
