import { useInfiniteQuery } from '@tanstack/react-query';
import type { FormEvent } from 'react';
import { useSearchParams } from 'react-router';
import { api, type Page } from '../api.ts';
import { formatDateTime } from '../ui/format.ts';
import { AppLink } from '../ui/links.tsx';
import { QueryState } from '../ui/status.tsx';
import { formatNumber, formatRate, formatVital, InsightsTabs, RatingBadge, VITAL_TITLES } from './parts.tsx';
import { type Release, type ReleaseRegression, VITAL_NAMES } from './types.ts';
import './insights.css';

const PAGE_SIZE = 20;

/** The metrics a release regression is found on, as the page names them. */
const REGRESSION_METRICS: Record<ReleaseRegression['metric'], string> = {
  error_rate: 'error rate',
  call_quality: 'poor calls',
};

/** "Worse than 1.0.0 (5 %) in production": what a regression was compared with. */
function RegressionDetail({ regression }: { regression: ReleaseRegression }) {
  return (
    <span className="detail" data-regression-detail={regression.metric}>
      {' '}
      Regression: worse than <code>{regression.previousRelease}</code> ({formatRate(regression.previous.rate)}
      {regression.environment === null ? '' : ` in ${regression.environment}`})
    </span>
  );
}

function ReleaseRow({ release }: { release: Release }) {
  const regressionOf = (metric: ReleaseRegression['metric']) =>
    release.regressions.filter((regression) => regression.metric === metric);
  return (
    <tr data-release={release.release}>
      <th scope="row">
        <code>{release.release}</code>
        {release.regressions.map((regression) => (
          <span key={`${regression.environment} ${regression.metric}`}>
            {' '}
            <span
              className="rating rating-poor"
              data-regression={regression.metric}
              title={`Regression on ${REGRESSION_METRICS[regression.metric]} against ${regression.previousRelease}${regression.environment === null ? '' : ` in ${regression.environment}`}`}
            >
              Regression: {REGRESSION_METRICS[regression.metric]}
            </span>
          </span>
        ))}
      </th>
      <td>{formatDateTime(release.firstSeenAt)}</td>
      <td>{formatDateTime(release.lastSeenAt)}</td>
      <td data-column="sessions">
        <AppLink to={`/sessions?${new URLSearchParams({ release: release.release })}`}>
          {release.sessions}
        </AppLink>
      </td>
      <td data-column="users">{release.users}</td>
      <td data-column="error-rate">
        {formatRate(release.errorRate)}
        <span className="detail">
          {' '}
          ({release.sessionsWithErrors} of {release.sessions})
        </span>
        {regressionOf('error_rate').map((regression) => (
          <RegressionDetail key={`${regression.environment}`} regression={regression} />
        ))}
      </td>
      <td data-column="new-issues">{release.newIssues}</td>
      <td data-column="calls">{release.calls}</td>
      <td data-column="call-quality">
        {release.callQuality === null ? '—' : formatNumber(release.callQuality)}
        {release.poorCallRate === null ? null : (
          <span className="detail"> ({formatRate(release.poorCallRate)} poor)</span>
        )}
        {regressionOf('call_quality').map((regression) => (
          <RegressionDetail key={`${regression.environment}`} regression={regression} />
        ))}
      </td>
      <td data-column="vitals">
        <ul className="release-vitals">
          {VITAL_NAMES.map((metric) => {
            const vital = release.vitals[metric];
            return (
              <li key={metric} data-vital={metric}>
                <abbr title={VITAL_TITLES[metric]}>{metric}</abbr> {formatVital(metric, vital.p75)}{' '}
                <RatingBadge rating={vital.rating} />
              </li>
            );
          })}
        </ul>
      </td>
    </tr>
  );
}

/** `/releases`: each release, newest first, with its health; `?environment=` narrows every number. */
export function Releases() {
  const [params, setParams] = useSearchParams();
  const environment = params.get('environment') ?? '';
  const releases = useInfiniteQuery({
    queryKey: ['releases', environment],
    initialPageParam: undefined as string | undefined,
    getNextPageParam: (page: Page<Release>) => page.nextCursor,
    queryFn: ({ pageParam }) => {
      const query = new URLSearchParams({ limit: String(PAGE_SIZE) });
      if (environment !== '') query.set('environment', environment);
      if (pageParam !== undefined) query.set('cursor', pageParam);
      return api<Page<Release>>('GET', `/v1/releases?${query}`);
    },
  });
  function apply(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const value = String(new FormData(event.currentTarget).get('environment') ?? '').trim();
    const next = new URLSearchParams(params);
    if (value === '') next.delete('environment');
    else next.set('environment', value);
    setParams(next);
  }
  return (
    <section aria-labelledby="releases-title" className="insights-page">
      <h1 id="releases-title">Releases</h1>
      <InsightsTabs />
      <form className="filter-bar insights-filters" onSubmit={apply} key={environment} aria-label="Filters">
        <label>
          Environment
          <input name="environment" type="text" defaultValue={environment} placeholder="All" />
        </label>
        <button type="submit">Apply</button>
      </form>
      <QueryState query={releases}>
        {(data) => {
          const items = data.pages.flatMap((page) => page.items);
          return items.length === 0 ? (
            <p>No session reported a release yet (the SDK's `release` option).</p>
          ) : (
            <>
              <div className="table-scroll">
                <table data-table="releases">
                  <thead>
                    <tr>
                      <th scope="col">Release</th>
                      <th scope="col">First seen</th>
                      <th scope="col">Last seen</th>
                      <th scope="col">Sessions</th>
                      <th scope="col">Users</th>
                      <th scope="col">Error rate</th>
                      <th scope="col">New issues</th>
                      <th scope="col">Calls</th>
                      <th scope="col">Call quality</th>
                      <th scope="col">Web vitals (p75)</th>
                    </tr>
                  </thead>
                  <tbody>
                    {items.map((release) => (
                      <ReleaseRow key={release.release} release={release} />
                    ))}
                  </tbody>
                </table>
              </div>
              {releases.hasNextPage ? (
                <button
                  type="button"
                  onClick={() => void releases.fetchNextPage()}
                  disabled={releases.isFetchingNextPage}
                >
                  More releases
                </button>
              ) : null}
            </>
          );
        }}
      </QueryState>
    </section>
  );
}
