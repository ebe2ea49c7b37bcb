// Anomalies (servers/api/README.md, AI jobs, anomalies and digests): an `anomaly_scan` job scores
// one hour of a project's error rate, connect failure rate, median call quality and rage clicks
// against the same hour of the weeks before (anomaly-score.ts), and each anomaly fires once
// (`ai_anomalies`) through the project's notification rules as `ai.anomaly`.
import type { Kysely } from 'kysely';
import type { Database } from '../../platform/database/schema.ts';
import type { Project } from '../../platform/database/tables/projects.table.ts';
import { type NotificationDraft, notify } from '../notifications/index.ts';
import { type HourFacts, hourFacts, recordAnomaly, setAnomalyEvent } from './anomaly-repository.ts';
import {
  ANOMALY_METRICS,
  ANOMALY_RULES,
  ANOMALY_THRESHOLD,
  type AnomalyMetric,
  BASELINE_WEEKS,
  HIGH_SEVERITY_SCORE,
  type HourObservation,
  type HourScore,
  type ScoredHour,
  scoreHour,
} from './anomaly-score.ts';

const HOUR_MS = 3600 * 1000;

/** What `data.anomaly` of an `ai.anomaly` webhook holds: the numbers that made it fire. */
interface AnomalyDetails {
  metric: AnomalyMetric;
  /** The start of the UTC hour (ISO 8601). */
  hour: string;
  value: number;
  /** Sessions, calls, scored calls or page views of the hour. */
  volume: number;
  baseline: { median: number; mad: number; weeks: number };
  /** The robust z-score: 0.6745 (value − median) / max(MAD, floor); negative when the value fell. */
  score: number;
  direction: 'up' | 'down';
  threshold: number;
  minChange: number;
}

/** What an anomaly scan did: the result of its job. */
export type AnomalyScan = {
  hour: string;
  /** Each metric's score (its status, value, volume and, when scored, baseline and score). */
  metrics: Array<Record<string, string | number | null>>;
  /** The metrics that fired now (recorded for the first time). */
  fired: AnomalyMetric[];
  /** Notification events written (an anomaly no rule matches writes none). */
  events: number;
  deliveries: number;
};

/** A metric's value and volume out of an hour's facts. */
function observe(metric: AnomalyMetric, facts: HourFacts): HourObservation {
  const share = (part: number, whole: number) => (whole === 0 ? null : part / whole);
  switch (metric) {
    case 'error_rate':
      return { value: share(facts.sessionsWithErrors, facts.sessions), volume: facts.sessions };
    case 'connect_failure_rate':
      return { value: share(facts.failedToConnect, facts.calls), volume: facts.calls };
    case 'median_call_quality':
      return { value: facts.medianQuality, volume: facts.scoredCalls };
    case 'rage_click_rate':
      return { value: share(facts.rageClicks, facts.pageViews), volume: facts.pageViews };
  }
}

/** The integer counts of the hour behind a metric, as the webhook's `counts`. */
function countsOf(metric: AnomalyMetric, facts: HourFacts): Record<string, number> {
  switch (metric) {
    case 'error_rate':
      return { sessions: facts.sessions, sessionsWithErrors: facts.sessionsWithErrors };
    case 'connect_failure_rate':
      return { calls: facts.calls, failedToConnect: facts.failedToConnect };
    case 'median_call_quality':
      return { calls: facts.calls, scoredCalls: facts.scoredCalls };
    case 'rage_click_rate':
      return { pageViews: facts.pageViews, rageClicks: facts.rageClicks };
  }
}

/** How people read a value of the metric. */
function formatValue(metric: AnomalyMetric, value: number): string {
  if (metric === 'median_call_quality') return value.toFixed(1);
  if (metric === 'rage_click_rate') return `${value.toFixed(3)} rage clicks per page view`;
  return `${(100 * value).toFixed(1)}%`;
}

const TITLES: Readonly<Record<AnomalyMetric, string>> = {
  error_rate: 'More sessions with errors than usual',
  connect_failure_rate: 'More calls failing to connect than usual',
  median_call_quality: 'Call quality lower than usual',
  rage_click_rate: 'More rage clicks than usual',
};

/** The hour as people read it: `2026-11-17 14:00–15:00 UTC`. */
function hourLabel(hour: Date): string {
  const start = hour.toISOString();
  const end = new Date(hour.getTime() + HOUR_MS).toISOString();
  return `${start.slice(0, 10)} ${start.slice(11, 16)}–${end.slice(11, 16)} UTC`;
}

/** The dashboard's pages about a metric's hour. */
function linksOf(metric: AnomalyMetric, hour: Date, appUrl: string | undefined): Record<string, string> {
  if (appUrl === undefined) return {};
  const range = `from=${hour.toISOString()}&to=${new Date(hour.getTime() + HOUR_MS).toISOString()}`;
  const links: Record<string, string> = { overview: `${appUrl}/overview?${range}` };
  if (metric === 'error_rate') links.issues = `${appUrl}/issues`;
  if (metric === 'connect_failure_rate' || metric === 'median_call_quality')
    links.calls = `${appUrl}/calls/overview?${range}`;
  if (metric === 'rage_click_rate') links.heatmaps = `${appUrl}/heatmaps`;
  return links;
}

/** The notification of an anomaly. */
function draftOf(
  score: ScoredHour,
  hour: Date,
  facts: HourFacts,
  appUrl: string | undefined,
): { details: AnomalyDetails; draft: NotificationDraft } {
  const rule = ANOMALY_RULES[score.metric];
  const details: AnomalyDetails = {
    metric: score.metric,
    hour: hour.toISOString(),
    value: score.value,
    volume: score.volume,
    baseline: score.baseline,
    score: score.score,
    direction: score.direction,
    threshold: ANOMALY_THRESHOLD,
    minChange: rule.minChange,
  };
  const badness = Math.abs(score.score);
  const data = {
    title: TITLES[score.metric],
    summary: `${hourLabel(hour)}: ${formatValue(score.metric, score.value)} over ${score.volume} ${rule.unit}, against a median of ${formatValue(score.metric, score.baseline.median)} in the same hour of the previous ${score.baseline.weeks} weeks (robust z-score ${score.score.toFixed(1)}, threshold ${ANOMALY_THRESHOLD}).`,
    severity: badness >= HIGH_SEVERITY_SCORE ? ('high' as const) : ('medium' as const),
    counts: { ...countsOf(score.metric, facts), baselineWeeks: score.baseline.weeks },
    links: linksOf(score.metric, hour, appUrl),
    anomaly: details,
  };
  return {
    details,
    draft: {
      type: 'ai.anomaly',
      subject: { type: 'ai.anomaly' },
      // A rule's throttle holds back further anomalies of the same metric for its window.
      throttleKey: `ai.anomaly:${score.metric}`,
      data,
    },
  };
}

/** A score as the job's result lists it. */
function summarize(score: HourScore): Record<string, string | number | null> {
  const base = { metric: score.metric, status: score.status, value: score.value, volume: score.volume };
  if (score.status === 'low_volume') return base;
  if (score.status === 'short_baseline') return { ...base, baselineWeeks: score.baselineWeeks };
  return {
    ...base,
    median: score.baseline.median,
    mad: score.baseline.mad,
    baselineWeeks: score.baseline.weeks,
    score: score.score,
  };
}

/**
 * Scans the project's UTC hour starting at `hour`: scores each metric of
 * {@link ANOMALY_METRICS} against the same hour of the {@link BASELINE_WEEKS} weeks before, and
 * records and notifies each anomaly (an `ai.anomaly` through the project's rules, in the
 * transaction that records it). Idempotent: an anomaly already recorded for the metric and hour
 * fires nothing, so scanning again, or from another process at once, notifies once.
 *
 * @example
 * ```ts
 * const scan = await scanAnomalies(database, project, new Date('2026-11-17T14:00:00Z'), { now: new Date(), appUrl });
 * scan.fired; // e.g. ['error_rate']
 * ```
 */
export async function scanAnomalies(
  database: Kysely<Database>,
  project: Pick<Project, 'id' | 'organization_id'>,
  hour: Date,
  options: { now: Date; appUrl?: string | undefined },
): Promise<AnomalyScan> {
  const [current, ...before] = await hourFacts(database, project.id, hour, BASELINE_WEEKS);
  if (current === undefined) throw new Error('hourFacts returned no row for the scanned hour');
  const scan: AnomalyScan = { hour: hour.toISOString(), metrics: [], fired: [], events: 0, deliveries: 0 };
  for (const metric of ANOMALY_METRICS) {
    const score = scoreHour(
      metric,
      observe(metric, current),
      before.map((facts) => observe(metric, facts)),
    );
    scan.metrics.push(summarize(score));
    if (score.status !== 'anomaly') continue;
    const { details, draft } = draftOf(score, hour, current, options.appUrl);
    await database.transaction().execute(async (transaction) => {
      const recorded = await recordAnomaly(
        transaction,
        project.id,
        { metric, hour, value: score.value, score: score.score, details: { ...details } },
        options.now,
      );
      if (!recorded) return;
      scan.fired.push(metric);
      const notified = await notify(transaction, project, [draft], options.now);
      scan.events += notified.events.length;
      scan.deliveries += notified.deliveries;
      const eventId = notified.events[0];
      if (eventId !== undefined) await setAnomalyEvent(transaction, project.id, { metric, hour }, eventId);
    });
  }
  return scan;
}
