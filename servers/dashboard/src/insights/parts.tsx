import { NavLink, useSearchParams } from 'react-router';
import { useScopedHref } from '../ui/links.tsx';
import type { Compared, Rating, VitalName } from './types.ts';

// What the insights pages share: the time range in the URL, the sub-navigation, ratings, changes
// against the previous period and number formats.

/** The ranges offered (`?range=`), relative to now, as the calls overview's picker. */
export const RANGES: Array<{ id: string; label: string; ms: number }> = [
  { id: '24h', label: 'Last 24 hours', ms: 24 * 3600_000 },
  { id: '7d', label: 'Last 7 days', ms: 7 * 24 * 3600_000 },
  { id: '14d', label: 'Last 14 days', ms: 14 * 24 * 3600_000 },
  { id: '30d', label: 'Last 30 days', ms: 30 * 24 * 3600_000 },
  { id: '90d', label: 'Last 90 days', ms: 90 * 24 * 3600_000 },
];
const DEFAULT_RANGE = '7d';

/** The URL's range (`?range=`, default the last 7 days). */
export function rangeOf(params: URLSearchParams): { id: string; label: string; ms: number } {
  return (
    RANGES.find((candidate) => candidate.id === params.get('range')) ??
    (RANGES.find((candidate) => candidate.id === DEFAULT_RANGE) as (typeof RANGES)[number])
  );
}

/**
 * `from` and `to` of a range for the API: `to` is the next minute (so what arrives now is in),
 * `from` the range before it; both stay the same within a minute, and so does the query's cache.
 */
export function rangeTimes(ms: number): { from: string; to: string } {
  const to = Math.ceil((Date.now() + 1) / 60_000) * 60_000;
  return { from: new Date(to - ms).toISOString(), to: new Date(to).toISOString() };
}

/** The range select; changing it rewrites `?range=` and keeps the rest of the URL. */
export function RangePicker() {
  const [params, setParams] = useSearchParams();
  const range = rangeOf(params);
  return (
    <label className="range-picker">
      Time range
      <select
        name="range"
        value={range.id}
        onChange={(event) => {
          const next = new URLSearchParams(params);
          next.set('range', event.target.value);
          setParams(next);
        }}
      >
        {RANGES.map((candidate) => (
          <option key={candidate.id} value={candidate.id}>
            {candidate.label}
          </option>
        ))}
      </select>
    </label>
  );
}

const PAGES: Array<[string, string]> = [
  ['/overview', 'Overview'],
  ['/vitals', 'Web vitals'],
  ['/heatmaps', 'Heatmaps'],
  ['/funnels', 'Funnels'],
  ['/releases', 'Releases'],
];

/** The insights pages; the current one has `aria-current` (a funnel's page under Funnels). */
export function InsightsTabs() {
  const scoped = useScopedHref();
  return (
    <nav aria-label="Insights" className="insights-tabs">
      {PAGES.map(([to, label]) => (
        <NavLink key={to} to={scoped(to)} end={to !== '/funnels'}>
          {label}
        </NavLink>
      ))}
    </nav>
  );
}

export const RATING_NAMES: Record<Rating, string> = {
  good: 'Good',
  'needs-improvement': 'Needs improvement',
  poor: 'Poor',
};

/** A rating in words with its colour (the word is there: not colour alone). */
export function RatingBadge({ rating }: { rating: Rating | null | undefined }) {
  if (rating === null || rating === undefined) return <span className="rating rating-none">No data</span>;
  return (
    <span className={`rating rating-${rating}`} data-rating={rating}>
      {RATING_NAMES[rating]}
    </span>
  );
}

export const VITAL_TITLES: Record<VitalName, string> = {
  LCP: 'Largest Contentful Paint',
  INP: 'Interaction to Next Paint',
  CLS: 'Cumulative Layout Shift',
  FCP: 'First Contentful Paint',
  TTFB: 'Time to First Byte',
};

/** A vital's value: CLS unitless with 2 decimals (3 below 0.01), the others in ms or s. */
export function formatVital(metric: VitalName, value: number | null | undefined): string {
  if (value === null || value === undefined) return '—';
  if (metric === 'CLS') return value.toFixed(value < 0.01 && value > 0 ? 3 : 2);
  return value >= 1000 ? `${(value / 1000).toFixed(2)} s` : `${Math.round(value)} ms`;
}

/** An integer or a number with at most two decimals, in English grouping. */
export function formatNumber(value: number): string {
  return value.toLocaleString('en', { maximumFractionDigits: 2 });
}

/** `0.125` → `12.5 %`. */
export function formatRate(rate: number | null | undefined): string {
  if (rate === null || rate === undefined) return '—';
  return `${(rate * 100).toLocaleString('en', { maximumFractionDigits: 1 })} %`;
}

/**
 * The change of a number against the previous period, in words: "+2 (+50 %)", "−0.5 pp", "no
 * change", "new" (nothing before). `better` says which way is good, for the colour: more sessions
 * is neutral (undefined), a higher error rate bad ('down').
 */
export function Change({
  compared,
  rate = false,
  better,
  format = formatNumber,
}: {
  compared: Compared;
  rate?: boolean;
  better?: 'up' | 'down';
  format?: (value: number) => string;
}) {
  const { change, relativeChange, previous } = compared;
  let text: string;
  let direction: 'up' | 'down' | 'same' = 'same';
  if (change === null) text = previous === null ? 'no data before' : 'no data now';
  else if (change === 0) text = 'no change';
  else {
    direction = change > 0 ? 'up' : 'down';
    const sign = change > 0 ? '+' : '−';
    const amount = rate
      ? `${sign}${(Math.abs(change) * 100).toLocaleString('en', { maximumFractionDigits: 1 })} pp`
      : `${sign}${format(Math.abs(change))}`;
    const relative =
      relativeChange === null
        ? ''
        : ` (${sign}${(Math.abs(relativeChange) * 100).toLocaleString('en', { maximumFractionDigits: 0 })} %)`;
    text = rate || previous === 0 ? amount : `${amount}${relative}`;
  }
  const judgement =
    better === undefined || direction === 'same' ? 'neutral' : direction === better ? 'better' : 'worse';
  return (
    <span className={`change change-${judgement}`} data-change={change ?? ''}>
      {text}
    </span>
  );
}
