import { useQuery } from '@tanstack/react-query';
import type { ReactNode } from 'react';
import { useSearchParams } from 'react-router';
import { api } from '../api.ts';
import { formatDateTime } from '../ui/format.ts';
import { AppLink } from '../ui/links.tsx';
import { QueryState } from '../ui/status.tsx';
import {
  Change,
  formatNumber,
  formatRate,
  formatVital,
  InsightsTabs,
  RangePicker,
  RatingBadge,
  rangeOf,
  rangeTimes,
  VITAL_TITLES,
} from './parts.tsx';
import { type Compared, type Overview as OverviewAnswer, VITAL_NAMES } from './types.ts';
import './insights.css';

/** One number of the overview: its value and its change against the previous period. */
function Stat({
  id,
  label,
  compared,
  rate = false,
  better,
  format = formatNumber,
  link,
}: {
  id: string;
  label: string;
  compared: Compared;
  rate?: boolean;
  better?: 'up' | 'down';
  format?: (value: number) => string;
  link?: ReactNode;
}) {
  const value = compared.value === null ? '—' : rate ? formatRate(compared.value) : format(compared.value);
  return (
    <div data-stat={id}>
      <dt>{label}</dt>
      <dd className="stat-value">{value}</dd>
      <dd className="detail">
        <Change compared={compared} rate={rate} better={better} format={format} /> vs. previous period
        {compared.previous === null ? null : (
          <> ({rate ? formatRate(compared.previous) : format(compared.previous)})</>
        )}
      </dd>
      {link === undefined ? null : <dd className="detail">{link}</dd>}
    </div>
  );
}

function OverviewView({ overview }: { overview: OverviewAnswer }) {
  return (
    <>
      <p className="hint">
        {formatDateTime(overview.from)} to {formatDateTime(overview.to)}, against{' '}
        {formatDateTime(overview.previousFrom)} to {formatDateTime(overview.from)}.
      </p>
      <section aria-labelledby="overview-usage">
        <h2 id="overview-usage">Sessions and errors</h2>
        <dl className="overview-numbers">
          <Stat
            id="sessions"
            label="Sessions"
            compared={overview.sessions}
            link={<AppLink to="/sessions">Sessions</AppLink>}
          />
          <Stat id="users" label="Users" compared={overview.users} />
          <Stat
            id="error-rate"
            label="Sessions with errors"
            compared={overview.errorRate}
            rate
            better="down"
            link={<AppLink to="/sessions?hasErrors=true">Sessions with errors</AppLink>}
          />
          <Stat id="page-views" label="Page views" compared={overview.pageViews} />
          <Stat
            id="rage-clicks"
            label="Rage clicks"
            compared={overview.rageClicks}
            better="down"
            link={<AppLink to="/heatmaps?kind=rageclick">Rage click heatmaps</AppLink>}
          />
          <Stat
            id="dead-clicks"
            label="Dead clicks"
            compared={overview.deadClicks}
            better="down"
            link={<AppLink to="/heatmaps?kind=deadclick">Dead click heatmaps</AppLink>}
          />
        </dl>
      </section>

      <section aria-labelledby="overview-vitals">
        <h2 id="overview-vitals">Web vitals (p75)</h2>
        <table data-table="overview-vitals">
          <thead>
            <tr>
              <th scope="col">Metric</th>
              <th scope="col">p75</th>
              <th scope="col">Rating</th>
              <th scope="col">Page views measured</th>
              <th scope="col">Previous period</th>
              <th scope="col">Change</th>
            </tr>
          </thead>
          <tbody>
            {VITAL_NAMES.map((metric) => {
              const vital = overview.vitals[metric];
              return (
                <tr key={metric} data-vital={metric}>
                  <th scope="row">
                    <abbr title={VITAL_TITLES[metric]}>{metric}</abbr>
                  </th>
                  <td>{formatVital(metric, vital.value)}</td>
                  <td>
                    <RatingBadge rating={vital.rating} />
                  </td>
                  <td>{vital.count}</td>
                  <td>
                    {formatVital(metric, vital.previous)}{' '}
                    {vital.previousRating === null ? null : <RatingBadge rating={vital.previousRating} />}
                  </td>
                  <td>
                    <Change compared={vital} better="down" format={(value) => formatVital(metric, value)} />
                  </td>
                </tr>
              );
            })}
          </tbody>
        </table>
        <p>
          <AppLink to="/vitals">Web vitals per route</AppLink>
        </p>
      </section>

      <section aria-labelledby="overview-calls">
        <h2 id="overview-calls">Calls</h2>
        <dl className="overview-numbers">
          <Stat id="calls" label="Calls" compared={overview.calls} />
          <Stat
            id="call-quality"
            label="Call quality, median score"
            compared={overview.callQuality}
            better="up"
          />
          <Stat
            id="connect-failure-rate"
            label="Connect failure rate"
            compared={overview.connectFailureRate}
            rate
            better="down"
            link={<AppLink to="/calls/overview">Calls overview</AppLink>}
          />
        </dl>
      </section>

      <section aria-labelledby="overview-issues">
        <h2 id="overview-issues">Top issues</h2>
        {overview.topIssues.length === 0 ? (
          <p>No issue occurred in this period.</p>
        ) : (
          <table data-table="top-issues">
            <thead>
              <tr>
                <th scope="col">Issue</th>
                <th scope="col">Severity</th>
                <th scope="col">Status</th>
                <th scope="col">Occurrences</th>
                <th scope="col">Change</th>
              </tr>
            </thead>
            <tbody>
              {overview.topIssues.map((issue) => (
                <tr key={issue.id} data-issue-id={issue.id}>
                  <th scope="row">
                    <AppLink to={`/issues/${encodeURIComponent(issue.id)}`}>{issue.title}</AppLink>
                  </th>
                  <td>
                    <span className={`severity severity-${issue.severity}`}>{issue.severity}</span>
                  </td>
                  <td>{issue.status}</td>
                  <td>{issue.occurrences.value ?? 0}</td>
                  <td>
                    <Change compared={issue.occurrences} better="down" />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
        <p>
          <AppLink to="/issues">All issues</AppLink>
        </p>
      </section>
    </>
  );
}

/** `/overview`: the project's health over a period, each number against the period before. */
export function Overview() {
  const [params] = useSearchParams();
  const range = rangeOf(params);
  const { from, to } = rangeTimes(range.ms);
  const overview = useQuery({
    queryKey: ['insights-overview', from, to],
    queryFn: () => api<OverviewAnswer>('GET', `/v1/dashboard/overview?${new URLSearchParams({ from, to })}`),
  });
  return (
    <section aria-labelledby="overview-title" className="insights-page">
      <h1 id="overview-title">Overview</h1>
      <InsightsTabs />
      <RangePicker />
      <QueryState query={overview}>{(data) => <OverviewView overview={data} />}</QueryState>
    </section>
  );
}
