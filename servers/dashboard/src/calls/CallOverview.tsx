import { useQuery } from '@tanstack/react-query';
import { useSearchParams } from 'react-router';
import { api } from '../api.ts';
import { AppLink } from '../ui/links.tsx';
import { QueryState } from '../ui/status.tsx';
import { CallsTabs } from './CallsTabs.tsx';
import { formatNumber, formatRate } from './statistics.ts';
import type { Breakdown, CallOverview as Overview } from './types.ts';
import './calls.css';

/** The time ranges the overview offers (`?range=`), relative to now, as Sentry's period picker. */
const OVERVIEW_RANGES: Array<{ id: string; label: string; ms?: number }> = [
  { id: '24h', label: 'Last 24 hours', ms: 24 * 3600_000 },
  { id: '7d', label: 'Last 7 days', ms: 7 * 24 * 3600_000 },
  { id: '30d', label: 'Last 30 days', ms: 30 * 24 * 3600_000 },
  { id: '90d', label: 'Last 90 days', ms: 90 * 24 * 3600_000 },
  { id: 'all', label: 'All time' },
];
const DEFAULT_RANGE = '7d';

/**
 * The API query of a range: `from` = now minus the range, rounded down to the minute (so the
 * query, and its cache entry, stay the same within a minute); none for all time.
 */
function rangeQuery(range: string): string {
  const period = OVERVIEW_RANGES.find((candidate) => candidate.id === range);
  if (period?.ms === undefined) return '';
  const from = Math.floor((Date.now() - period.ms) / 60_000) * 60_000;
  return `?from=${new Date(from).toISOString()}`;
}

const BREAKDOWNS: Array<{ id: keyof Overview['breakdowns']; title: string; filter: string }> = [
  { id: 'networkType', title: 'By network type', filter: 'networkType' },
  { id: 'browser', title: 'By browser', filter: 'browser' },
  { id: 'device', title: 'By device', filter: 'device' },
  { id: 'release', title: 'By release', filter: 'release' },
];

function Bar({ part, whole }: { part: number; whole: number }) {
  const percent = whole === 0 ? 0 : (part / whole) * 100;
  return <span className="bar" style={{ width: `${Math.max(percent, part > 0 ? 1 : 0) * 1.5}px` }} />;
}

function BreakdownTable({
  id,
  title,
  filter,
  rows,
}: {
  id: string;
  title: string;
  filter: string;
  rows: Breakdown[];
}) {
  return (
    <section aria-labelledby={`breakdown-${id}`}>
      <h3 id={`breakdown-${id}`}>{title}</h3>
      {rows.length === 0 ? (
        <p>No calls.</p>
      ) : (
        <table data-breakdown={id}>
          <thead>
            <tr>
              <th scope="col">{title.replace('By ', '').replace(/^./, (letter) => letter.toUpperCase())}</th>
              <th scope="col">Calls</th>
              <th scope="col">Failed to connect</th>
              <th scope="col">Connect failure rate</th>
              <th scope="col">Relay rate</th>
              <th scope="col">Average quality</th>
            </tr>
          </thead>
          <tbody>
            {rows.map((row) => (
              <tr key={row.key ?? ''}>
                <th scope="row">
                  {row.key === undefined ? (
                    'not reported'
                  ) : (
                    <AppLink to={`/calls?${new URLSearchParams({ [filter]: row.key })}`}>{row.key}</AppLink>
                  )}
                </th>
                <td>{row.calls}</td>
                <td>{row.failedToConnect}</td>
                <td>{formatRate(row.connectFailureRate)}</td>
                <td>{formatRate(row.relayRate)}</td>
                <td>{row.averageQuality === undefined ? '—' : formatNumber(row.averageQuality)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}

function OverviewView({ overview }: { overview: Overview }) {
  const percentile = (value: number | undefined) => (value === undefined ? '—' : `${formatNumber(value)} ms`);
  const scored = overview.qualityDistribution.reduce((sum, bucket) => sum + bucket.calls, 0);
  return (
    <>
      <dl className="overview-numbers">
        <div>
          <dt>Calls</dt>
          <dd data-stat="calls">{overview.calls}</dd>
        </div>
        <div>
          <dt>Connect failure rate</dt>
          <dd data-stat="connect-failure-rate">{formatRate(overview.connectFailureRate)}</dd>
          <dd className="detail">
            {overview.failedToConnect} of {overview.calls} failed to connect
          </dd>
        </div>
        <div>
          <dt>Relay rate</dt>
          <dd data-stat="relay-rate">{formatRate(overview.relayRate)}</dd>
          <dd className="detail">
            {overview.relayed} of {overview.calls} relayed through TURN
          </dd>
        </div>
        <div>
          <dt>Setup time, median</dt>
          <dd data-stat="setup-p50">{percentile(overview.setupMs.p50)}</dd>
          <dd className="detail">
            p90 {percentile(overview.setupMs.p90)}, p99 {percentile(overview.setupMs.p99)}, over{' '}
            {overview.setupMs.count} connected calls
          </dd>
        </div>
      </dl>

      <section aria-labelledby="quality-title">
        <h2 id="quality-title">Quality distribution</h2>
        <table data-table="quality">
          <caption className="visually-hidden">Calls by quality score, {scored} scored calls</caption>
          <thead>
            <tr>
              <th scope="col">Quality score</th>
              <th scope="col">Calls</th>
              <th scope="col">Share of scored calls</th>
            </tr>
          </thead>
          <tbody>
            {overview.qualityDistribution.map((bucket) => (
              <tr key={bucket.from}>
                <th scope="row">
                  {bucket.from}–{bucket.to === 100 ? 100 : bucket.to - 1}
                </th>
                <td>{bucket.calls}</td>
                <td>
                  <Bar part={bucket.calls} whole={scored} />{' '}
                  {formatRate(scored === 0 ? 0 : bucket.calls / scored)}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </section>

      <section aria-labelledby="failures-title">
        <h2 id="failures-title">Top failure reasons</h2>
        {overview.topFailureReasons.length === 0 ? (
          <p>No call failed to connect.</p>
        ) : (
          <table data-table="failure-reasons">
            <thead>
              <tr>
                <th scope="col">Reason</th>
                <th scope="col">Calls</th>
              </tr>
            </thead>
            <tbody>
              {overview.topFailureReasons.map((row) => (
                <tr key={row.reason}>
                  <th scope="row">{row.reason}</th>
                  <td>{row.calls}</td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </section>

      <section aria-labelledby="breakdowns-title">
        <h2 id="breakdowns-title">Breakdowns</h2>
        {BREAKDOWNS.map((breakdown) => (
          <BreakdownTable key={breakdown.id} {...breakdown} rows={overview.breakdowns[breakdown.id]} />
        ))}
      </section>
    </>
  );
}

/** `/calls/overview`: connect failures, relays, setup times, quality and breakdowns over a time range. */
export function CallOverview() {
  const [params, setParams] = useSearchParams();
  const range = OVERVIEW_RANGES.some((candidate) => candidate.id === params.get('range'))
    ? (params.get('range') as string)
    : DEFAULT_RANGE;
  const query = rangeQuery(range);
  const overview = useQuery({
    queryKey: ['calls-overview', query],
    queryFn: () => api<Overview>('GET', `/v1/calls/overview${query}`),
  });
  function choose(value: string) {
    const next = new URLSearchParams(params);
    next.set('range', value);
    setParams(next);
  }
  return (
    <section aria-labelledby="overview-title">
      <h1 id="overview-title">Calls overview</h1>
      <CallsTabs />
      <label className="range-picker">
        Time range
        <select value={range} onChange={(event) => choose(event.target.value)}>
          {OVERVIEW_RANGES.map((candidate) => (
            <option key={candidate.id} value={candidate.id}>
              {candidate.label}
            </option>
          ))}
        </select>
      </label>
      <QueryState query={overview}>{(data) => <OverviewView overview={data} />}</QueryState>
    </section>
  );
}
