import { useQuery } from '@tanstack/react-query';
import { useMemo } from 'react';
import { useParams } from 'react-router';
import { api } from '../api.ts';
import { formatClock, formatDateTime, formatDuration } from '../ui/format.ts';
import { AppLink } from '../ui/links.tsx';
import { QueryState } from '../ui/status.tsx';
import { CallFacts } from './CallFacts.tsx';
import {
  describeEvent,
  evidenceLabel,
  findingTitle,
  formatEvidence,
  MARKER_KINDS,
  METRIC_CHARTS,
  markerKindOf,
  trackLabel,
} from './labels.ts';
import { MetricFigure } from './MetricFigure.tsx';
import { numbers } from './statistics.ts';
import type { ChartBand, ChartMarker } from './TimeChart.tsx';
import type { CallDetail, CallFinding, Series, SessionStart } from './types.ts';
import './calls.css';

/** `/calls/:id`: one call, its findings, its metrics over time with the events on them, its events. */
export function CallPage() {
  const { id = '' } = useParams();
  const call = useQuery({
    queryKey: ['call', id],
    queryFn: () => api<CallDetail>('GET', `/v1/calls/${encodeURIComponent(id)}`),
    // A call still open (live, or waiting out the inactivity timeout) is read again every 10 s.
    refetchInterval: (query) => (query.state.data?.state === 'open' ? 10_000 : false),
  });
  return <QueryState query={call}>{(detail) => <CallView call={detail} />}</QueryState>;
}

/** When a finding's condition held: `[t - sustainedMs, t]` for sustained ones, else the moment `t`. */
function findingRange(finding: CallFinding, start: number): ChartBand {
  const at = Date.parse(finding.t) - start;
  const sustained = finding.evidence.sustainedMs;
  return typeof sustained === 'number' ? { from: at - sustained, to: at } : { from: at, to: at };
}

/** A series' values as numbers or `null` (strings and booleans are not drawn). */
function numeric(series: Series, key: string): Array<number | null> {
  return (series[key] ?? []).map((value) => (typeof value === 'number' ? value : null));
}

/** `none` ×6, `bandwidth` ×2 → `Limited by: none in 6 samples, bandwidth in 2.` */
function limitationReasons(series: Series): string | undefined {
  const counts = new Map<string, number>();
  for (const value of series.qualityLimitation ?? [])
    if (typeof value === 'string') counts.set(value, (counts.get(value) ?? 0) + 1);
  if (counts.size === 0) return undefined;
  const parts = [...counts].map(
    ([reason, count]) => `${reason} in ${count} ${count === 1 ? 'sample' : 'samples'}`,
  );
  return `Reason reported: ${parts.join(', ')}.`;
}

function CallView({ call }: { call: CallDetail }) {
  const session = useQuery({
    queryKey: ['session', call.sessionId],
    queryFn: () => api<SessionStart>('GET', `/v1/sessions/${encodeURIComponent(call.sessionId)}`),
  });
  const start = Date.parse(call.startedAt);
  const view = useMemo(() => {
    const offset = (values: Series[string] | undefined) => numbers(values).map((t) => t - start);
    const connectionX = offset(call.connection.t);
    const windows = numbers(call.connection.windowMs);
    const firstWindowStart = (connectionX[0] ?? 0) - (windows[0] ?? 0);
    const ends = [
      ...connectionX,
      ...call.tracks.flatMap((track) => offset(track.series.t)),
      ...call.events.map((event) => event.t - start),
      call.endedAt === undefined ? 0 : Date.parse(call.endedAt) - start,
    ];
    const range: [number, number] = [Math.min(0, firstWindowStart), Math.max(1000, ...ends)];
    const markers: ChartMarker[] = call.events.flatMap((event) => {
      const kind = markerKindOf(event.name);
      return kind === undefined ? [] : [{ at: event.t - start, kind }];
    });
    const bandsFor = (trackId: string | undefined) =>
      call.findings
        .filter((finding) => finding.track === undefined || finding.track === trackId)
        .map((finding) => findingRange(finding, start));
    const tracks = call.tracks.map((track) => {
      const x = offset(track.series.t);
      const charts = METRIC_CHARTS.flatMap((chart) => {
        const lines = chart.lines
          .filter((line) => numbers(track.series[line.key]).length > 0)
          .map((line) => ({ label: line.label, values: numeric(track.series, line.key) }));
        if (lines.length === 0) return [];
        let note: string | undefined;
        if (chart.id === 'quality-limitation') note = limitationReasons(track.series);
        if (chart.id === 'freezes') {
          const freezes = numbers(track.series.freezes).reduce((sum, count) => sum + count, 0);
          if (track.series.freezes !== undefined)
            note = `${freezes} ${freezes === 1 ? 'freeze' : 'freezes'} in all.`;
        }
        return [{ ...chart, lines, note }];
      });
      const hasLimitationChart = charts.some((chart) => chart.id === 'quality-limitation');
      return {
        track,
        x,
        charts,
        reasons: hasLimitationChart ? undefined : limitationReasons(track.series),
        bands: bandsFor(track.id),
      };
    });
    const score = {
      x: connectionX,
      lines: [{ label: 'quality score', values: numeric(call.connection, 'score') }],
    };
    return { range, markers, tracks, score, connectionBands: bandsFor(undefined) };
  }, [call, start]);

  const markerCounts = MARKER_KINDS.map((kind) => ({
    kind,
    count: view.markers.filter((marker) => marker.kind === kind).length,
  }));
  const trackNames = new Map(call.tracks.map((track) => [track.id, trackLabel(track)]));
  const replayOffset =
    session.data === undefined ? undefined : Math.max(0, start - Date.parse(session.data.startedAt));

  return (
    <article className="call-page" aria-labelledby="call-title">
      <p>
        <AppLink to="/calls">All calls</AppLink>
      </p>
      <h1 id="call-title">Call of {formatDateTime(call.startedAt)}</h1>
      <p className="call-replay">
        {replayOffset === undefined ? (
          session.error ? (
            <span>The session's replay is not available.</span>
          ) : (
            <span aria-busy="true">Finding the replay…</span>
          )
        ) : (
          <AppLink to={`/sessions/${encodeURIComponent(call.sessionId)}?t=${replayOffset}`}>
            Watch the replay from the call's start ({formatClock(replayOffset)} into the session)
          </AppLink>
        )}
      </p>
      <CallFacts call={call} />

      <section aria-labelledby="findings-title">
        <h2 id="findings-title">Findings ({call.findings.length})</h2>
        {call.findings.length === 0 ? (
          <p>No detector found a problem in this call.</p>
        ) : (
          <ul className="findings">
            {call.findings.map((finding) => {
              const band = findingRange(finding, start);
              return (
                <li
                  key={`${finding.kind}/${finding.track ?? ''}`}
                  className={`finding severity-${finding.severity}`}
                >
                  <h3>
                    {findingTitle(finding.kind)} <span className="severity">{finding.severity}</span>
                  </h3>
                  <p>
                    Detector <code>{finding.kind}</code>
                    {finding.track === undefined
                      ? ''
                      : ` on ${trackNames.get(finding.track) ?? 'track'} (${finding.track})`}
                    {'. '}
                    {band.from === band.to
                      ? `At ${formatClock(band.to)} into the call`
                      : `From ${formatClock(band.from)} to ${formatClock(band.to)} into the call`}{' '}
                    ({formatDateTime(finding.t)}).
                  </p>
                  <dl className="evidence">
                    {Object.entries(finding.evidence).map(([name, value]) => (
                      <div key={name}>
                        <dt>{evidenceLabel(name)}</dt>
                        <dd>{formatEvidence(name, value)}</dd>
                      </div>
                    ))}
                  </dl>
                </li>
              );
            })}
          </ul>
        )}
      </section>

      <section aria-labelledby="metrics-title">
        <h2 id="metrics-title">Metrics over time</h2>
        <p>
          Time is counted from the call's start. Vertical lines mark the call's events; shaded bands are when
          a finding's condition held.
        </p>
        <ul className="marker-legend" aria-label="Event markers">
          {markerCounts.map(({ kind, count }) => (
            <li key={kind.id} data-marker-kind={kind.id}>
              <span className={`marker-swatch marker-${kind.id}`} />
              {kind.label}: {count}
            </li>
          ))}
        </ul>
        {view.score.x.length > 0 && numbers(call.connection.score).length > 0 ? (
          <section aria-labelledby="connection-title" className="track">
            <h3 id="connection-title">Connection</h3>
            <MetricFigure
              title="Quality score"
              unit="0–100"
              x={view.score.x}
              lines={view.score.lines}
              range={view.range}
              markers={view.markers}
              bands={view.connectionBands}
            />
          </section>
        ) : null}
        {view.tracks.length === 0 && view.score.x.length === 0 ? (
          <p>No samples: the call never sent its measurements (it did not connect, or was not tracked).</p>
        ) : null}
        {view.tracks.map(({ track, x, charts, reasons, bands }) => (
          <section
            key={track.id}
            aria-labelledby={`track-${track.id}`}
            className="track"
            data-track-id={track.id}
          >
            <h3 id={`track-${track.id}`}>
              {trackLabel(track)} <span className="track-id">{track.id}</span>
            </h3>
            {reasons === undefined ? null : <p>Quality limitation. {reasons}</p>}
            {charts.length === 0 ? <p>This track reported no metric to chart.</p> : null}
            <div className="figures">
              {charts.map((chart) => (
                <MetricFigure
                  key={chart.id}
                  title={chart.title}
                  unit={chart.unit}
                  x={x}
                  lines={chart.lines}
                  range={view.range}
                  markers={view.markers}
                  bands={bands}
                  note={chart.note}
                />
              ))}
            </div>
          </section>
        ))}
      </section>

      <section aria-labelledby="events-title">
        <h2 id="events-title">Events ({call.events.length})</h2>
        {call.events.length === 0 ? (
          <p>The call sent no event.</p>
        ) : (
          <table className="events">
            <thead>
              <tr>
                <th scope="col">Time</th>
                <th scope="col">Event</th>
                <th scope="col">Marker</th>
              </tr>
            </thead>
            <tbody>
              {call.events.map((event) => (
                <tr key={`${event.seq}/${event.index}`}>
                  <td>{formatClock(event.t - start)}</td>
                  <td>{describeEvent(event)}</td>
                  <td>{markerKindOf(event.name)?.label ?? '—'}</td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </section>
      <p>
        Duration {call.durationMs === undefined ? 'unknown' : formatDuration(call.durationMs)}; call id{' '}
        <code>{call.id}</code>.
      </p>
    </article>
  );
}
