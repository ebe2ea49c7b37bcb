// Regressions (servers/api/README.md, Insights: Releases and regressions): a release worse than
// the one before it, a route's web vital gone to a worse rating. Each fires once (the
// `insight_alerts` table's key) and goes through the project's notification rules.
import { type ReleaseRegression, releaseRegressionSchema, type VitalsRegression } from '@svc/protocol';
import type { FastifyBaseLogger } from 'fastify';
import type { Kysely } from 'kysely';
import type { Database } from '../../platform/database/schema.ts';
import type { Project } from '../../platform/database/tables/projects.table.ts';
import { createPollingLoop, type PollingLoop } from '../../platform/jobs/polling-loop.ts';
import { type NotificationDraft, notify, type RegressionMetric } from '../notifications/index.ts';
import {
  callTotalsByEnvironment,
  POOR_CALL_SCORE,
  releasesByEnvironment,
  routeVitalWindows,
  type VitalPercentiles,
} from './release-repository.ts';
import { isRegression, twoProportionTest } from './stats.ts';
import { rateVital, VITAL_NAMES, type VitalRating } from './vitals.ts';

const DAY_MS = 24 * 3600 * 1000;

/** The one-sided level of the release tests. */
const REGRESSION_ALPHA = 0.01;
/** Sessions (error rate) or scored calls (call quality) each of two releases needs to be compared. */
const REGRESSION_MIN_TOTAL = 100;
/** Page views measuring a vital each window needs for its route to be compared. */
const MIN_VITAL_PAGE_VIEWS = 50;
/** The vitals' windows: the last 7 days against the 7 days before. */
const VITAL_WINDOW_MS = 7 * DAY_MS;
/** How often a server process checks every project. */
const REGRESSION_CHECK_MS = 10 * 60 * 1000;
/** A release is checked while it was seen in this long. */
const ACTIVE_RELEASE_MS = 7 * DAY_MS;

const RATING_ORDER: Readonly<Record<VitalRating, number>> = { good: 0, 'needs-improvement': 1, poor: 2 };

/** A regression found, before it is recorded. */
interface Regression {
  type: 'release.regression' | 'vitals.regression';
  key: string;
  metric: RegressionMetric;
  environment: string | null;
  release: string | null;
  previousRelease: string | null;
  route: string | null;
  period: string | null;
  /**
   * The numbers that made it fire: the alert's `details`, the webhook's `data.regression`, typed
   * by the protocol's schemas of it (`releaseRegressionSchema`, `vitalsRegressionSchema`).
   */
  details: ReleaseRegression | VitalsRegression;
  draft: NotificationDraft;
}

/** What {@link checkRegressions} did. */
export interface RegressionCheck {
  /** The regressions that fired now (recorded for the first time), as `type` and alert key. */
  fired: Array<{ type: Regression['type']; key: string }>;
  /** Notification events written (a regression no rule matches writes none). */
  events: number;
  deliveries: number;
}

/** A share as a percentage with one decimal. */
const percent = (events: number, total: number) => `${((100 * events) / total).toFixed(1)}%`;

/** A p-value as people read it. */
const pValue = (p: number) => (p < 0.001 ? 'p < 0.001' : `p = ${p.toFixed(3)}`);

/** The Monday (UTC) of the week of `time`, `YYYY-MM-DD`: a vitals regression's period. */
function weekOf(time: Date): string {
  const day = Math.floor(time.getTime() / DAY_MS);
  // 1970-01-01 was a Thursday: day 0 is 3 days after a Monday.
  const monday = day - ((day + 3) % 7);
  return new Date(monday * DAY_MS).toISOString().slice(0, 10);
}

/** Releases of the project worse than the one before them in their environment. */
async function releaseRegressions(
  database: Kysely<Database>,
  projectId: string,
  now: Date,
  links: Record<string, string>,
): Promise<Regression[]> {
  const [releases, calls] = await Promise.all([
    releasesByEnvironment(database, projectId),
    callTotalsByEnvironment(database, projectId),
  ]);
  const found: Regression[] = [];
  for (const [index, current] of releases.entries()) {
    const previous = releases[index - 1];
    // Ordered by environment, then first seen: the one before is in the same environment, or none.
    if (previous === undefined || previous.environment !== current.environment) continue;
    if (current.lastSeenAt.getTime() < now.getTime() - ACTIVE_RELEASE_MS) continue;
    const environment = current.environment;
    const where = environment === null ? '' : ` in ${environment}`;
    const callsOf = (release: string) =>
      calls.get(JSON.stringify([environment, release])) ?? { scored: 0, poor: 0 };
    const currentCalls = callsOf(current.release);
    const previousCalls = callsOf(previous.release);
    const tests: Array<{
      metric: 'error_rate' | 'call_quality';
      previous: { events: number; total: number };
      current: { events: number; total: number };
      title: string;
      what: string;
      unit: string;
      counts: Record<string, number>;
    }> = [
      {
        metric: 'error_rate',
        previous: { events: previous.sessionsWithErrors, total: previous.sessions },
        current: { events: current.sessionsWithErrors, total: current.sessions },
        title: `Release ${current.release} has more sessions with errors than ${previous.release}`,
        what: 'had an error',
        unit: 'sessions',
        counts: {
          sessions: current.sessions,
          sessionsWithErrors: current.sessionsWithErrors,
          previousSessions: previous.sessions,
          previousSessionsWithErrors: previous.sessionsWithErrors,
        },
      },
      {
        metric: 'call_quality',
        previous: { events: previousCalls.poor, total: previousCalls.scored },
        current: { events: currentCalls.poor, total: currentCalls.scored },
        title: `Release ${current.release} has more poor calls than ${previous.release}`,
        what: `scored below ${POOR_CALL_SCORE}`,
        unit: 'scored calls',
        counts: {
          calls: currentCalls.scored,
          poorCalls: currentCalls.poor,
          previousCalls: previousCalls.scored,
          previousPoorCalls: previousCalls.poor,
        },
      },
    ];
    for (const test of tests) {
      const options = { minTotal: REGRESSION_MIN_TOTAL, alpha: REGRESSION_ALPHA };
      if (!isRegression(test.previous, test.current, options)) continue;
      const { z, pOneSided } = twoProportionTest(test.previous, test.current);
      const key = JSON.stringify([environment, current.release, test.metric]);
      const regression: ReleaseRegression = {
        metric: test.metric,
        environment,
        release: current.release,
        previousRelease: previous.release,
        current: { ...test.current, rate: test.current.events / test.current.total },
        previous: { ...test.previous, rate: test.previous.events / test.previous.total },
        z,
        pOneSided,
        alpha: REGRESSION_ALPHA,
        minTotal: REGRESSION_MIN_TOTAL,
      };
      const data = {
        title: test.title,
        summary: `${percent(test.current.events, test.current.total)} of ${test.current.total} ${test.unit} of ${current.release}${where} ${test.what}, against ${percent(test.previous.events, test.previous.total)} of ${test.previous.total} of ${previous.release} (one-sided pooled two-proportion z-test: z = ${z.toFixed(2)}, ${pValue(pOneSided)}).`,
        severity: 'high' as const,
        counts: test.counts,
        release: current.release,
        links,
        regression,
      };
      found.push({
        type: 'release.regression',
        key,
        metric: test.metric,
        environment,
        release: current.release,
        previousRelease: previous.release,
        route: null,
        period: null,
        details: regression,
        draft: {
          type: 'release.regression',
          subject: { type: 'release.regression', metric: test.metric, environment, release: current.release },
          throttleKey: `release.regression:${key}`,
          data,
        },
      });
    }
  }
  return found;
}

/** Routes whose p75 of a vital went to a worse rating over the last 7 days. */
async function vitalRegressions(
  database: Kysely<Database>,
  projectId: string,
  now: Date,
  links: Record<string, string>,
): Promise<Regression[]> {
  const middle = new Date(now.getTime() - VITAL_WINDOW_MS);
  const from = new Date(middle.getTime() - VITAL_WINDOW_MS);
  const rows = await routeVitalWindows(database, projectId, { from, middle, to: now });
  const windows = new Map<string, { previous?: VitalPercentiles; current?: VitalPercentiles }>();
  for (const row of rows) {
    const entry = windows.get(row.route) ?? {};
    entry[row.window] = row.vitals;
    windows.set(row.route, entry);
  }
  const period = weekOf(now);
  const found: Regression[] = [];
  for (const [route, { previous, current }] of windows) {
    if (previous === undefined || current === undefined) continue;
    for (const metric of VITAL_NAMES) {
      const before = previous[metric];
      const after = current[metric];
      if (before.count < MIN_VITAL_PAGE_VIEWS || after.count < MIN_VITAL_PAGE_VIEWS) continue;
      if (before.p75 === null || after.p75 === null) continue;
      const previousRating = rateVital(metric, before.p75);
      const rating = rateVital(metric, after.p75);
      if (RATING_ORDER[rating] <= RATING_ORDER[previousRating]) continue;
      const key = JSON.stringify([route, metric, period]);
      const regression: VitalsRegression = {
        metric,
        route,
        period,
        from: from.toISOString(),
        middle: middle.toISOString(),
        to: now.toISOString(),
        current: { p75: after.p75, rating, count: after.count },
        previous: { p75: before.p75, rating: previousRating, count: before.count },
        minPageViews: MIN_VITAL_PAGE_VIEWS,
      };
      const data = {
        title: `${metric} of ${route} went from ${previousRating} to ${rating}`,
        summary: `The p75 ${metric} of ${route} was ${after.p75} over the last 7 days (${after.count} page views), ${rating}, against ${before.p75} over the 7 days before (${before.count} page views), ${previousRating}.`,
        severity: 'medium' as const,
        counts: { pageViews: after.count, previousPageViews: before.count },
        route,
        links,
        regression,
      };
      found.push({
        type: 'vitals.regression',
        key,
        metric,
        environment: null,
        release: null,
        previousRelease: null,
        route,
        period,
        details: regression,
        draft: {
          type: 'vitals.regression',
          subject: { type: 'vitals.regression', metric, environment: null, release: null },
          throttleKey: `vitals.regression:${key}`,
          data,
        },
      });
    }
  }
  return found;
}

/**
 * Checks a project for regressions at `now` and notifies each new one through the project's
 * rules (a `regression` source), in the transaction that records it:
 *
 * - `release.regression`: each release seen in the last 7 days against the release first seen
 *   before it in the same environment, on the share of sessions with an error and on the share
 *   of scored calls scoring below {@link POOR_CALL_SCORE}: a one-sided pooled two-proportion
 *   z-test at {@link REGRESSION_ALPHA}, each release with at least {@link REGRESSION_MIN_TOTAL}.
 *   Once per environment, release and metric.
 * - `vitals.regression`: each route whose p75 of a vital over `[now − 7 d, now)` has a worse
 *   web.dev rating than over the 7 days before, both with at least {@link MIN_VITAL_PAGE_VIEWS}
 *   page views measuring it. Once per route, metric and week (UTC, from Monday).
 *
 * Idempotent: what fired is in `insight_alerts`, whose key makes a second insert a no-op, so any
 * number of server processes may check the same project at once.
 *
 * @example
 * ```ts
 * const { fired } = await checkRegressions(database, project, new Date(), { appUrl: 'https://app.example.com' });
 * ```
 */
export async function checkRegressions(
  database: Kysely<Database>,
  project: Pick<Project, 'id' | 'organization_id'>,
  now: Date,
  options: { appUrl?: string } = {},
): Promise<RegressionCheck> {
  const links: Record<string, string> =
    options.appUrl === undefined ? {} : { releases: `${options.appUrl}/releases` };
  const found = [
    ...(await releaseRegressions(database, project.id, now, links)),
    ...(await vitalRegressions(database, project.id, now, links)),
  ];
  const result: RegressionCheck = { fired: [], events: 0, deliveries: 0 };
  for (const regression of found) {
    await database.transaction().execute(async (transaction) => {
      const inserted = await transaction
        .insertInto('insight_alerts')
        .values({
          project_id: project.id,
          type: regression.type,
          alert_key: regression.key,
          metric: regression.metric,
          environment: regression.environment,
          release: regression.release,
          previous_release: regression.previousRelease,
          route: regression.route,
          period: regression.period,
          details: JSON.stringify(regression.details),
          created_at: now,
        })
        .onConflict((conflict) => conflict.columns(['project_id', 'type', 'alert_key']).doNothing())
        .returning('alert_key')
        .executeTakeFirst();
      if (inserted === undefined) return;
      result.fired.push({ type: regression.type, key: regression.key });
      const notified = await notify(transaction, project, [regression.draft], now);
      result.events += notified.events.length;
      result.deliveries += notified.deliveries;
      const eventId = notified.events[0];
      if (eventId !== undefined)
        await transaction
          .updateTable('insight_alerts')
          .set({ event_id: eventId })
          .where('project_id', '=', project.id)
          .where('type', '=', regression.type)
          .where('alert_key', '=', regression.key)
          .execute();
    });
  }
  return result;
}

/** A release regression that fired, as `GET /v1/releases` lists it: its `data.regression` and when. */
export type FiredReleaseRegression = ReleaseRegression & { firedAt: string };

/**
 * The `release.regression` alerts recorded for the releases `releases` of the project (of the
 * environment `environment` only, when given), by release, each release's oldest first: one
 * query for a page of releases. The numbers are the alert's `details` (the webhook's
 * `data.regression`); an alert whose details do not parse as `releaseRegressionSchema` (never
 * written so) is left out.
 *
 * @example
 * ```ts
 * const regressions = await findReleaseRegressions(database, projectId, ['2.0.0', '1.9.0']);
 * regressions.get('2.0.0'); // [{ metric: 'error_rate', previousRelease: '1.9.0', … }] or undefined
 * ```
 */
export async function findReleaseRegressions(
  database: Kysely<Database>,
  projectId: string,
  releases: readonly string[],
  environment?: string | undefined,
): Promise<Map<string, FiredReleaseRegression[]>> {
  const found = new Map<string, FiredReleaseRegression[]>();
  if (releases.length === 0) return found;
  let query = database
    .selectFrom('insight_alerts')
    .select(['release', 'details', 'created_at'])
    .where('project_id', '=', projectId)
    .where('type', '=', 'release.regression')
    .where('release', 'in', [...releases]);
  if (environment !== undefined) query = query.where('environment', '=', environment);
  const rows = await query.orderBy('created_at').orderBy('alert_key').execute();
  for (const row of rows) {
    const details = typeof row.details === 'string' ? (JSON.parse(row.details) as unknown) : row.details;
    const parsed = releaseRegressionSchema.safeParse(details);
    if (row.release === null || !parsed.success) continue;
    const listed = found.get(row.release) ?? [];
    listed.push({ ...parsed.data, firedAt: new Date(row.created_at).toISOString() });
    found.set(row.release, listed);
  }
  return found;
}

/**
 * Checks every project that is not deleted ({@link checkRegressions}), one after the other.
 * Resolves with how many regressions fired.
 *
 * @example
 * ```ts
 * const fired = await checkAllRegressions(database, new Date(), { appUrl });
 * ```
 */
export async function checkAllRegressions(
  database: Kysely<Database>,
  now: Date,
  options: { appUrl?: string } = {},
): Promise<number> {
  const projects = await database
    .selectFrom('projects')
    .select(['id', 'organization_id'])
    .where('deleted_at', 'is', null)
    .orderBy('id')
    .execute();
  let fired = 0;
  for (const project of projects)
    fired += (await checkRegressions(database, project, now, options)).fired.length;
  return fired;
}

/**
 * The regression check of a server process: {@link checkAllRegressions} when started, then every
 * 10 minutes (`pollMs`). Every process may run one: each regression fires once.
 *
 * @example
 * ```ts
 * const worker = createRegressionWorker({ database, log, appUrl, onDeliveriesQueued: () => deliveries.wake() });
 * worker.start();
 * ```
 */
export function createRegressionWorker(
  dependencies: {
    database: Kysely<Database>;
    log: FastifyBaseLogger;
    appUrl: string;
    /** Called when a check queued webhook deliveries. */
    onDeliveriesQueued?: () => void;
  },
  options: { pollMs?: number } = {},
): PollingLoop {
  return createPollingLoop(
    async () => {
      const fired = await checkAllRegressions(dependencies.database, new Date(), {
        appUrl: dependencies.appUrl,
      });
      if (fired > 0) {
        dependencies.log.info({ fired }, `${fired} regression(s) fired`);
        dependencies.onDeliveriesQueued?.();
      }
      // Checked until now: the next check is due in pollMs, whatever fired.
      return { ran: fired, more: false };
    },
    {
      pollMs: options.pollMs ?? REGRESSION_CHECK_MS,
      onError: (error) => dependencies.log.error({ err: error }, 'could not check for regressions'),
    },
  );
}
