import { lazy, memo, Suspense, useEffect, useMemo, useRef, useState } from 'react';
import type { Playback } from '../replay/Player.tsx';
import { formatClock } from '../ui/format.ts';
import {
  currentRequest,
  filterRequests,
  formatBytes,
  NETWORK_FILTERS,
  type NetworkFilter,
  type NetworkRequest,
  outcomeOf,
} from './network.ts';

// The waterfall reads the traces route and draws trees: loaded when a trace is first opened.
const TraceWaterfall = lazy(() =>
  import('./TraceWaterfall.tsx').then((module) => ({ default: module.TraceWaterfall })),
);

export interface NetworkPanelProps {
  sessionId: string;
  /** The session's requests; undefined while they load. */
  requests: NetworkRequest[] | undefined;
  playback: Playback;
}

/**
 * The session's network requests (`request` events) in a table that follows the replay: the row
 * at the player's time is marked, a row's request button seeks there, failures say so in words;
 * a request with a trace id opens its OpenTelemetry trace as a waterfall under the table.
 */
export function NetworkPanel({ sessionId, requests, playback }: NetworkPanelProps) {
  const [filter, setFilter] = useState<NetworkFilter>('all');
  const [opened, setOpened] = useState<NetworkRequest>();
  const shown = useMemo(() => filterRequests(requests ?? [], filter), [requests, filter]);
  const currentKey = currentRequest(shown, playback.offset)?.key;
  const scroller = useRef<HTMLDivElement>(null);

  // The current row stays in view inside the panel (without scrolling the page).
  useEffect(() => {
    const container = scroller.current;
    if (container === null || currentKey === undefined) return;
    const row = container.querySelector<HTMLElement>(`[data-key="${currentKey}"]`);
    if (row === null) return;
    const top = row.offsetTop;
    if (top < container.scrollTop || top + row.offsetHeight > container.scrollTop + container.clientHeight)
      container.scrollTop = Math.max(0, top - container.clientHeight / 2);
  }, [currentKey]);

  const failedCount = requests?.filter((row) => row.failed).length ?? 0;
  return (
    <section className="network-panel" aria-labelledby="network-title">
      <h2 id="network-title">Network</h2>
      {requests === undefined ? (
        <p aria-busy="true">Loading the requests…</p>
      ) : (
        <>
          <fieldset className="network-filters">
            <legend className="visually-hidden">Show requests</legend>
            {(Object.keys(NETWORK_FILTERS) as NetworkFilter[]).map((name) => (
              <label key={name} className="inline">
                <input
                  type="radio"
                  name="network-filter"
                  value={name}
                  checked={filter === name}
                  onChange={() => setFilter(name)}
                />
                {NETWORK_FILTERS[name]}
                {name === 'all' ? ` (${requests.length})` : name === 'failed' ? ` (${failedCount})` : ''}
              </label>
            ))}
          </fieldset>
          {shown.length === 0 ? (
            <p>
              {requests.length === 0 ? 'No requests were recorded in this session.' : 'No request matches.'}
            </p>
          ) : (
            <div ref={scroller} className="network-scroller">
              <NetworkTable
                rows={shown}
                currentKey={currentKey}
                openedKey={opened?.key}
                seek={playback.seek}
                onOpen={setOpened}
              />
            </div>
          )}
        </>
      )}
      <div id="trace-waterfall">
        {opened?.traceId === undefined ? null : (
          <Suspense fallback={<p aria-busy="true">Loading the trace…</p>}>
            <TraceWaterfall sessionId={sessionId} traceId={opened.traceId} request={opened} />
          </Suspense>
        )}
      </div>
    </section>
  );
}

interface NetworkTableProps {
  rows: NetworkRequest[];
  currentKey: string | undefined;
  openedKey: string | undefined;
  seek(offset: number): void;
  onOpen(row: NetworkRequest | undefined): void;
}

/**
 * The table of requests; memoized, so playback (which moves the offset ten times a second)
 * renders it again only when the current row changes.
 */
const NetworkTable = memo(function NetworkTable({
  rows,
  currentKey,
  openedKey,
  seek,
  onOpen,
}: NetworkTableProps) {
  return (
    <table className="network-table">
      <caption className="visually-hidden">
        Requests of the session by start time; the current one is marked
      </caption>
      <thead>
        <tr>
          <th scope="col">Start</th>
          <th scope="col">Request</th>
          <th scope="col">Type</th>
          <th scope="col">Status</th>
          <th scope="col">Duration</th>
          <th scope="col">Sent</th>
          <th scope="col">Received</th>
          <th scope="col">Trace</th>
        </tr>
      </thead>
      <tbody>
        {rows.map((row) => (
          <tr
            key={row.key}
            data-key={row.key}
            data-offset={Math.round(row.offset)}
            className={row.failed ? 'network-row network-failed' : 'network-row'}
            aria-current={row.key === currentKey ? 'true' : undefined}
          >
            <td className="network-time">{formatClock(row.offset)}</td>
            <td className="network-request">
              <button type="button" className="network-seek" onClick={() => seek(row.offset)}>
                <span className="visually-hidden">Play from {formatClock(row.offset)}: </span>
                <span className="network-method">{row.method}</span> {row.url}
              </button>
            </td>
            <td>{row.initiator === 'xhr' ? 'XHR' : 'Fetch'}</td>
            <td className="network-status">{outcomeOf(row)}</td>
            <td>{row.durationMs} ms</td>
            <td>{formatBytes(row.requestBytes)}</td>
            <td>{formatBytes(row.responseBytes)}</td>
            <td>
              {row.traceId === undefined ? (
                <span className="hint">–</span>
              ) : (
                <button
                  type="button"
                  aria-expanded={openedKey === row.key}
                  aria-controls="trace-waterfall"
                  onClick={() => onOpen(openedKey === row.key ? undefined : row)}
                >
                  {openedKey === row.key ? 'Hide trace' : 'Trace'}
                  <span className="visually-hidden">
                    {' '}
                    of {row.method} {row.url}
                  </span>
                </button>
              )}
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
});
