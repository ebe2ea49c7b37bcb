// What `GET /v1/releases` and `GET /v1/dashboard/overview` answer, from the aggregates of
// release-repository.ts (servers/api/README.md, Insights: Releases and regressions, Overview).
import { z } from 'zod';
import type {
  CallTotals,
  ClickTotals,
  ReleaseFacts,
  SessionTotals,
  TopIssue,
  VitalPercentiles,
} from './release-repository.ts';
import { rateVital, VITAL_NAMES, type VitalName } from './vitals.ts';

const ratingSchema = z.enum(['good', 'needs-improvement', 'poor']);

/** One vital of a release: page views that measured it, their p75 and its web.dev rating. */
const vitalSchema = z.object({
  count: z.int(),
  /** Nearest-rank p75; null when no page view measured it. */
  p75: z.number().nullable(),
  rating: ratingSchema.nullable(),
});

const vitalsShape = <Schema extends z.ZodType>(schema: Schema) =>
  z.object(Object.fromEntries(VITAL_NAMES.map((name) => [name, schema])) as Record<VitalName, Schema>);

/** One release of `GET /v1/releases`. */
export const releaseSchema = z.object({
  release: z.string(),
  firstSeenAt: z.iso.datetime(),
  lastSeenAt: z.iso.datetime(),
  sessions: z.int(),
  /** Distinct user ids among its sessions. */
  users: z.int(),
  sessionsWithErrors: z.int(),
  /** Share (0..1) of its sessions with an error. */
  errorRate: z.number(),
  /** Issue clusters whose first occurrence was in this release. */
  newIssues: z.int(),
  calls: z.int(),
  /** Median quality score (0..100) of its scored calls; null when none was scored. */
  callQuality: z.number().nullable(),
  /** Share (0..1) of its scored calls scoring below 60; null when none was scored. */
  poorCallRate: z.number().nullable(),
  vitals: vitalsShape(vitalSchema),
});
type ReleaseView = z.infer<typeof releaseSchema>;

/** A share, or null without a whole. */
function rate(part: number, whole: number): number | null {
  return whole > 0 ? part / whole : null;
}

/** The vitals' p75s with their ratings. */
function toVitals(vitals: VitalPercentiles): z.infer<ReturnType<typeof vitalsShape<typeof vitalSchema>>> {
  return Object.fromEntries(
    VITAL_NAMES.map((name) => {
      const { count, p75 } = vitals[name];
      return [name, { count, p75, rating: p75 === null ? null : rateVital(name, p75) }];
    }),
  ) as Record<VitalName, z.infer<typeof vitalSchema>>;
}

/**
 * A release as `GET /v1/releases` lists it.
 *
 * @example
 * ```ts
 * const items = page.releases.map(toRelease);
 * ```
 */
export function toRelease(facts: ReleaseFacts): ReleaseView {
  return {
    release: facts.release,
    firstSeenAt: facts.firstSeenAt.toISOString(),
    lastSeenAt: facts.lastSeenAt.toISOString(),
    sessions: facts.sessions,
    users: facts.users,
    sessionsWithErrors: facts.sessionsWithErrors,
    errorRate: rate(facts.sessionsWithErrors, facts.sessions) ?? 0,
    newIssues: facts.newIssues,
    calls: facts.calls.calls,
    callQuality: facts.calls.medianQuality,
    poorCallRate: rate(facts.calls.poor, facts.calls.scored),
    vitals: toVitals(facts.vitals),
  };
}

/** A number of the overview next to the previous period's: `change` is value − previous. */
const comparedSchema = z.object({
  value: z.number().nullable(),
  previous: z.number().nullable(),
  /** value − previous; null when either is null. */
  change: z.number().nullable(),
  /** (value − previous) / previous; null when either is null or previous is 0. */
  relativeChange: z.number().nullable(),
});
type Compared = z.infer<typeof comparedSchema>;

/**
 * A value next to the previous period's, with the change and the relative change.
 *
 * @example
 * ```ts
 * compare(120, 100); // { value: 120, previous: 100, change: 20, relativeChange: 0.2 }
 * compare(5, 0); // { value: 5, previous: 0, change: 5, relativeChange: null }
 * ```
 */
function compare(value: number | null, previous: number | null): Compared {
  const change = value === null || previous === null ? null : value - previous;
  return {
    value,
    previous,
    change,
    relativeChange: change === null || previous === 0 || previous === null ? null : change / previous,
  };
}

const overviewVitalSchema = comparedSchema.extend({
  /** Page views that measured it in the period. */
  count: z.int(),
  rating: ratingSchema.nullable(),
  previousRating: ratingSchema.nullable(),
});

/** `GET /v1/dashboard/overview`. */
export const overviewSchema = z.object({
  from: z.iso.datetime(),
  to: z.iso.datetime(),
  /** The period before, of equal length: `[previousFrom, from)`. */
  previousFrom: z.iso.datetime(),
  sessions: comparedSchema,
  users: comparedSchema,
  errorRate: comparedSchema,
  pageViews: comparedSchema,
  rageClicks: comparedSchema,
  deadClicks: comparedSchema,
  vitals: vitalsShape(overviewVitalSchema),
  calls: comparedSchema,
  /** Median quality score (0..100) of the period's scored calls. */
  callQuality: comparedSchema,
  /** Share (0..1) of the period's calls that never connected (as `GET /v1/calls/overview`). */
  connectFailureRate: comparedSchema,
  topIssues: z.array(
    z.object({
      id: z.string(),
      kind: z.string(),
      title: z.string(),
      severity: z.string(),
      status: z.string(),
      occurrences: comparedSchema,
    }),
  ),
});
type OverviewView = z.infer<typeof overviewSchema>;

/** What the overview reads of one period. */
export interface PeriodFacts {
  sessions: SessionTotals;
  clicks: ClickTotals;
  vitals: VitalPercentiles;
  calls: CallTotals;
  /** From calls' overview: calls started in the period and those that failed to connect. */
  connect: { calls: number; failedToConnect: number };
}

/**
 * The overview of a period next to the previous one of equal length.
 *
 * @example
 * ```ts
 * toOverview({ previousFrom, from, to }, current, previous, top);
 * ```
 */
export function toOverview(
  range: { previousFrom: Date; from: Date; to: Date },
  current: PeriodFacts,
  previous: PeriodFacts,
  issues: readonly TopIssue[],
): OverviewView {
  const errorRate = (facts: PeriodFacts) => rate(facts.sessions.sessionsWithErrors, facts.sessions.sessions);
  const failureRate = (facts: PeriodFacts) => rate(facts.connect.failedToConnect, facts.connect.calls);
  return {
    from: range.from.toISOString(),
    to: range.to.toISOString(),
    previousFrom: range.previousFrom.toISOString(),
    sessions: compare(current.sessions.sessions, previous.sessions.sessions),
    users: compare(current.sessions.users, previous.sessions.users),
    errorRate: compare(errorRate(current), errorRate(previous)),
    pageViews: compare(current.clicks.pageViews, previous.clicks.pageViews),
    rageClicks: compare(current.clicks.rageClicks, previous.clicks.rageClicks),
    deadClicks: compare(current.clicks.deadClicks, previous.clicks.deadClicks),
    vitals: Object.fromEntries(
      VITAL_NAMES.map((name) => {
        const now = current.vitals[name].p75;
        const before = previous.vitals[name].p75;
        return [
          name,
          {
            ...compare(now, before),
            count: current.vitals[name].count,
            rating: now === null ? null : rateVital(name, now),
            previousRating: before === null ? null : rateVital(name, before),
          },
        ];
      }),
    ) as OverviewView['vitals'],
    calls: compare(current.connect.calls, previous.connect.calls),
    callQuality: compare(current.calls.medianQuality, previous.calls.medianQuality),
    connectFailureRate: compare(failureRate(current), failureRate(previous)),
    topIssues: issues.map((issue) => ({
      id: issue.id,
      kind: issue.kind,
      title: issue.title,
      severity: issue.severity,
      status: issue.status,
      occurrences: compare(issue.occurrences, issue.previousOccurrences),
    })),
  };
}
