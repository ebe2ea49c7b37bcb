import { useQuery } from '@tanstack/react-query';
import { type FormEvent, useMemo } from 'react';
import { useSearchParams } from 'react-router';
import { api } from '../api.ts';
import { AppLink } from '../ui/links.tsx';
import { QueryState } from '../ui/status.tsx';
import { DailyChart, type DailyLine } from './DailyChart.tsx';
import {
  formatRate,
  formatVital,
  InsightsTabs,
  RANGES,
  RatingBadge,
  rangeOf,
  rangeTimes,
  VITAL_TITLES,
} from './parts.tsx';
import { VITAL_NAMES, type VitalMetrics, type VitalName, type VitalsAnswer } from './types.ts';
import './insights.css';

/** The filters of `GET /v1/vitals` kept in the URL under the API's names (besides `range`). */
const FILTERS = ['device', 'browser', 'release', 'environment'] as const;

/** web.dev's thresholds (servers/api insights/vitals.ts): good up to the first, poor above the second. */
const THRESHOLDS: Record<VitalName, [number, number]> = {
  LCP: [2500, 4000],
  INP: [200, 500],
  CLS: [0.1, 0.25],
  FCP: [1800, 3000],
  TTFB: [800, 1800],
};

/** The API query of the page's URL: the range's times and the filters. */
function vitalsQuery(params: URLSearchParams): URLSearchParams {
  const query = new URLSearchParams(rangeTimes(rangeOf(params).ms));
  for (const name of FILTERS) {
    const value = params.get(name);
    if (value !== null && value !== '') query.set(name, value);
  }
  query.set('limit', '200');
  return query;
}

/** The filters as a form over the URL: the selects apply at once, text on Enter or Apply. */
function VitalsFilters() {
  const [params, setParams] = useSearchParams();
  function apply(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    const next = new URLSearchParams();
    for (const name of ['org', 'project', 'metric']) {
      const value = params.get(name);
      if (value !== null) next.set(name, value);
    }
    for (const name of ['range', ...FILTERS]) {
      const value = String(form.get(name) ?? '').trim();
      if (value !== '') next.set(name, value);
    }
    setParams(next);
  }
  const submit = (event: { currentTarget: HTMLSelectElement }) => event.currentTarget.form?.requestSubmit();
  const text = (name: string, label: string) => (
    <label>
      {label}
      <input name={name} type="text" defaultValue={params.get(name) ?? ''} />
    </label>
  );
  return (
    <form
      className="filter-bar insights-filters"
      onSubmit={apply}
      key={params.toString()}
      aria-label="Filters"
    >
      <label>
        Time range
        <select name="range" defaultValue={rangeOf(params).id} onChange={submit}>
          {RANGES.map((range) => (
            <option key={range.id} value={range.id}>
              {range.label}
            </option>
          ))}
        </select>
      </label>
      <label>
        Device
        <select name="device" defaultValue={params.get('device') ?? ''} onChange={submit}>
          <option value="">Any</option>
          <option value="desktop">Desktop</option>
          <option value="tablet">Tablet</option>
          <option value="mobile">Mobile</option>
        </select>
      </label>
      {text('browser', 'Browser')}
      {text('release', 'Release')}
      {text('environment', 'Environment')}
      <button type="submit">Apply filters</button>
    </form>
  );
}

/** A metric's p75 with its rating, and the shares of each rating as a stacked bar. */
function VitalCell({ metric, metrics }: { metric: VitalName; metrics: VitalMetrics }) {
  const vital = metrics[metric];
  if (vital.count === 0) return <span className="rating rating-none">No data</span>;
  return (
    <span className="vital-cell" data-p75={vital.p75}>
      <span className="vital-value">{formatVital(metric, vital.p75)}</span>{' '}
      <RatingBadge rating={vital.rating} />
    </span>
  );
}

function Distribution({ metric, metrics }: { metric: VitalName; metrics: VitalMetrics }) {
  const vital = metrics[metric];
  const label = `${formatRate(vital.good)} good, ${formatRate(vital.needsImprovement)} needs improvement, ${formatRate(vital.poor)} poor`;
  return (
    <span className="distribution" role="img" aria-label={label} title={label}>
      <span className="share-good" style={{ width: `${vital.good * 100}%` }} />
      <span className="share-needs-improvement" style={{ width: `${vital.needsImprovement * 100}%` }} />
      <span className="share-poor" style={{ width: `${vital.poor * 100}%` }} />
    </span>
  );
}

function Overall({ answer }: { answer: VitalsAnswer }) {
  return (
    <section aria-labelledby="vitals-overall">
      <h2 id="vitals-overall">All routes ({answer.overall.pageViews} page views)</h2>
      <dl className="overview-numbers">
        {VITAL_NAMES.map((metric) => {
          const vital = answer.overall.metrics[metric];
          return (
            <div key={metric} data-overall={metric}>
              <dt>
                <abbr title={VITAL_TITLES[metric]}>{metric}</abbr> p75
              </dt>
              <dd className="stat-value">{formatVital(metric, vital.p75)}</dd>
              <dd>
                <RatingBadge rating={vital.rating} />
              </dd>
              <dd className="detail">
                {vital.count} page views measured
                {vital.count > 0 ? (
                  <>
                    {' '}
                    <Distribution metric={metric} metrics={answer.overall.metrics} />
                  </>
                ) : null}
              </dd>
            </div>
          );
        })}
      </dl>
    </section>
  );
}

function Series({ answer, metric }: { answer: VitalsAnswer; metric: VitalName }) {
  const [params, setParams] = useSearchParams();
  const days = useMemo(() => answer.series.map((row) => row.day), [answer]);
  const lines = useMemo<DailyLine[]>(
    () => [
      {
        label: `${metric} p75`,
        color: '#1a56b8',
        values: answer.series.map((row) => row.metrics[metric].p75 ?? null),
      },
    ],
    [answer, metric],
  );
  const [good, poor] = THRESHOLDS[metric];
  const thresholds = useMemo(
    () => [
      { value: good, color: '#0b7a4b' },
      { value: poor, color: '#a3141d' },
    ],
    [good, poor],
  );
  return (
    <section aria-labelledby="vitals-series">
      <h2 id="vitals-series">By day</h2>
      <label className="range-picker">
        Metric
        <select
          value={metric}
          onChange={(event) => {
            const next = new URLSearchParams(params);
            next.set('metric', event.target.value);
            setParams(next);
          }}
        >
          {VITAL_NAMES.map((name) => (
            <option key={name} value={name}>
              {name}: {VITAL_TITLES[name]}
            </option>
          ))}
        </select>
      </label>
      {answer.series.length === 0 ? (
        <p>No page views in this range.</p>
      ) : (
        <figure className="chart-figure">
          <DailyChart
            days={days}
            lines={lines}
            unit={metric === 'CLS' ? 'CLS' : 'ms'}
            thresholds={thresholds}
          />
          <figcaption>
            {metric} p75 per day (UTC); dashed lines: good up to {formatVital(metric, good)} (green), poor
            above {formatVital(metric, poor)} (red).
          </figcaption>
          <table data-table="vitals-series">
            <caption className="visually-hidden">{metric} per day</caption>
            <thead>
              <tr>
                <th scope="col">Day</th>
                <th scope="col">Page views</th>
                <th scope="col">{metric} p75</th>
                <th scope="col">Rating</th>
              </tr>
            </thead>
            <tbody>
              {answer.series.map((row) => (
                <tr key={row.day}>
                  <th scope="row">{row.day}</th>
                  <td>{row.pageViews}</td>
                  <td>{formatVital(metric, row.metrics[metric].p75)}</td>
                  <td>
                    <RatingBadge rating={row.metrics[metric].rating} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </figure>
      )}
    </section>
  );
}

function Routes({ answer }: { answer: VitalsAnswer }) {
  return (
    <section aria-labelledby="vitals-routes">
      <h2 id="vitals-routes">By route</h2>
      {answer.routes.length === 0 ? (
        <p>No page views in this range.</p>
      ) : (
        <div className="table-scroll">
          <table data-table="vitals-routes">
            <thead>
              <tr>
                <th scope="col">Route</th>
                <th scope="col">Page views</th>
                {VITAL_NAMES.map((metric) => (
                  <th scope="col" key={metric}>
                    <abbr title={VITAL_TITLES[metric]}>{metric}</abbr> p75
                  </th>
                ))}
                <th scope="col">Heatmap</th>
              </tr>
            </thead>
            <tbody>
              {answer.routes.map((row) => (
                <tr key={row.route} data-route={row.route}>
                  <th scope="row">
                    <code>{row.route}</code>
                  </th>
                  <td data-column="page-views">{row.pageViews}</td>
                  {VITAL_NAMES.map((metric) => (
                    <td key={metric} data-metric={metric}>
                      <VitalCell metric={metric} metrics={row.metrics} />
                    </td>
                  ))}
                  <td>
                    <AppLink to={`/heatmaps?${new URLSearchParams({ route: row.route, kind: 'click' })}`}>
                      Clicks
                    </AppLink>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}

/** `/vitals`: web vitals at p75 per route and overall, by day, with the filters in the URL. */
export function Vitals() {
  const [params] = useSearchParams();
  const query = vitalsQuery(params);
  const metric = (VITAL_NAMES as readonly string[]).includes(params.get('metric') ?? '')
    ? (params.get('metric') as VitalName)
    : 'LCP';
  const vitals = useQuery({
    queryKey: ['insights-vitals', query.toString()],
    queryFn: () => api<VitalsAnswer>('GET', `/v1/vitals?${query}`),
  });
  return (
    <section aria-labelledby="vitals-title" className="insights-page">
      <h1 id="vitals-title">Web vitals</h1>
      <InsightsTabs />
      <VitalsFilters />
      <QueryState query={vitals}>
        {(answer) => (
          <>
            <Overall answer={answer} />
            <Routes answer={answer} />
            <Series answer={answer} metric={metric} />
          </>
        )}
      </QueryState>
    </section>
  );
}
