// Digests (servers/api/README.md, AI jobs, anomalies and digests): a project's day or week in
// numbers with links — new and growing issues, regressions and anomalies, sessions, calls and web
// vitals against the period before — stored once per project, period and start (`ai_digests`)
// and sent through the project's notification rules as `ai.digest`.
import type { Kysely } from 'kysely';
import { z } from 'zod';
import type { Database } from '../../platform/database/schema.ts';
import type { Project } from '../../platform/database/tables/projects.table.ts';
import type { AiDigest } from '../../platform/database/tables/reports.table.ts';
import { createId } from '../../platform/ids.ts';
import { rateVital } from '../insights/index.ts';
import { type NotificationDraft, notify } from '../notifications/index.ts';
import {
  type Compared,
  DIGEST_VITALS,
  type DigestRange,
  firedRegressions,
  growingIssues,
  insertDigest,
  newIssues,
  periodAnomalies,
  periodCalls,
  periodPageViews,
  periodSessions,
  setDigestEvent,
} from './digest-repository.ts';

/** New issues listed (most occurrences first; `total` counts them all). */
const NEW_ISSUES_LISTED = 10;
/** Growing issues listed (largest growth first). */
const GROWING_ISSUES_LISTED = 5;

const compared = <Schema extends z.ZodType>(schema: Schema) => z.object({ value: schema, previous: schema });
const count = z.int().min(0);
const share = z.number().min(0).max(1).nullable();
const ratingSchema = z.enum(['good', 'needs-improvement', 'poor']).nullable();

const vitalSchema = z.object({
  /** The p75 (nearest rank) of the period's page views that measured it; null when none did. */
  p75: z.number().nullable(),
  previousP75: z.number().nullable(),
  count,
  previousCount: count,
  rating: ratingSchema,
  previousRating: ratingSchema,
});

/**
 * What a digest says: its period (`[start, end)` against `[previousStart, start)`), whether
 * nothing happened in it (`quiet`), and every number with the period before's and with links.
 */
const digestContentSchema = z.object({
  period: z.enum(['daily', 'weekly']),
  start: z.iso.datetime(),
  end: z.iso.datetime(),
  previousStart: z.iso.datetime(),
  /** No session, call, page view, issue occurrence, regression or anomaly in the period. */
  quiet: z.boolean(),
  sessions: z.object({
    sessions: compared(count),
    sessionsWithErrors: compared(count),
    errorRate: compared(share),
  }),
  newIssues: z.object({
    /** Clusters first seen in the period. */
    total: count,
    items: z.array(
      z.object({
        id: z.string(),
        kind: z.string(),
        title: z.string(),
        severity: z.string(),
        /** Occurrences and sessions recorded in the period. */
        occurrences: count,
        sessions: count,
        firstSeenAt: z.iso.datetime(),
        link: z.string().optional(),
      }),
    ),
  }),
  growingIssues: z.array(
    z.object({
      id: z.string(),
      kind: z.string(),
      title: z.string(),
      severity: z.string(),
      occurrences: count,
      previousOccurrences: count,
      growth: count,
      link: z.string().optional(),
    }),
  ),
  regressions: z.array(
    z.object({
      type: z.enum(['release.regression', 'vitals.regression']),
      metric: z.string(),
      environment: z.string().nullable(),
      release: z.string().nullable(),
      previousRelease: z.string().nullable(),
      route: z.string().nullable(),
      firedAt: z.iso.datetime(),
    }),
  ),
  anomalies: z.array(
    z.object({
      metric: z.string(),
      hour: z.iso.datetime(),
      value: z.number(),
      score: z.number(),
    }),
  ),
  calls: z.object({
    calls: compared(count),
    failedToConnect: compared(count),
    connectFailureRate: compared(share),
    relayed: compared(count),
    relayRate: compared(share),
    scoredCalls: compared(count),
    medianQuality: compared(z.number().nullable()),
    averageQuality: compared(z.number().nullable()),
  }),
  pageViews: compared(count),
  vitals: z.object({ LCP: vitalSchema, INP: vitalSchema, CLS: vitalSchema }),
  links: z.record(z.string(), z.string()),
});
type DigestContent = z.infer<typeof digestContentSchema>;

/** A digest as `GET /v1/ai/digests` lists it. */
export const digestSchema = z.object({
  id: z.string(),
  period: z.enum(['daily', 'weekly']),
  start: z.iso.datetime(),
  end: z.iso.datetime(),
  createdAt: z.iso.datetime(),
  /** The `ai.digest` notification sent with it (none for a quiet period, or when no rule matched). */
  eventId: z.string().optional(),
  content: digestContentSchema,
});

/** A stored digest as {@link digestSchema} shows it. */
export function toDigestView(row: AiDigest): z.infer<typeof digestSchema> {
  const content = typeof row.content === 'string' ? (JSON.parse(row.content) as unknown) : row.content;
  return {
    id: row.id,
    period: row.period,
    start: new Date(row.period_start).toISOString(),
    end: new Date(row.period_end).toISOString(),
    createdAt: new Date(row.created_at).toISOString(),
    eventId: row.event_id ?? undefined,
    content: content as DigestContent,
  };
}

const ratio = (part: number, whole: number) => (whole === 0 ? null : part / whole);
const both = <Value, Result>(pair: Compared<Value>, map: (value: Value) => Result): Compared<Result> => ({
  value: map(pair.value),
  previous: map(pair.previous),
});

/**
 * Computes the digest of the project's period `[start, end)` against the period of equal length
 * before it, with links into the dashboard at `appUrl`.
 *
 * @example
 * ```ts
 * const content = await buildDigest(database, projectId, { period: 'daily', start, end }, { appUrl });
 * ```
 */
async function buildDigest(
  database: Kysely<Database>,
  projectId: string,
  input: { period: 'daily' | 'weekly'; start: Date; end: Date },
  options: { appUrl?: string | undefined } = {},
): Promise<DigestContent> {
  const { start, end } = input;
  const range: DigestRange = { previousStart: new Date(2 * start.getTime() - end.getTime()), start, end };
  const [sessions, calls, views, fresh, growing, regressions, anomalies] = await Promise.all([
    periodSessions(database, projectId, range),
    periodCalls(database, projectId, range),
    periodPageViews(database, projectId, range),
    newIssues(database, projectId, range, NEW_ISSUES_LISTED),
    growingIssues(database, projectId, range, GROWING_ISSUES_LISTED),
    firedRegressions(database, projectId, range),
    periodAnomalies(database, projectId, range),
  ]);
  const appUrl = options.appUrl;
  const issueLink = (id: string) => (appUrl === undefined ? {} : { link: `${appUrl}/issues/${id}` });
  const period = `from=${start.toISOString()}&to=${end.toISOString()}`;
  const quiet =
    sessions.sessions.value === 0 &&
    calls.value.calls === 0 &&
    views.value.pageViews === 0 &&
    fresh.total === 0 &&
    growing.length === 0 &&
    regressions.length === 0 &&
    anomalies.length === 0;
  return {
    period: input.period,
    start: start.toISOString(),
    end: end.toISOString(),
    previousStart: range.previousStart.toISOString(),
    quiet,
    sessions: {
      sessions: sessions.sessions,
      sessionsWithErrors: sessions.sessionsWithErrors,
      errorRate: {
        value: ratio(sessions.sessionsWithErrors.value, sessions.sessions.value),
        previous: ratio(sessions.sessionsWithErrors.previous, sessions.sessions.previous),
      },
    },
    newIssues: {
      total: fresh.total,
      items: fresh.items.map((issue) => ({
        ...issue,
        firstSeenAt: issue.firstSeenAt.toISOString(),
        ...issueLink(issue.id),
      })),
    },
    growingIssues: growing.map((issue) => ({
      ...issue,
      growth: issue.occurrences - issue.previousOccurrences,
      ...issueLink(issue.id),
    })),
    regressions: regressions.map((alert) => ({
      type: alert.type,
      metric: alert.metric,
      environment: alert.environment,
      release: alert.release,
      previousRelease: alert.previous_release,
      route: alert.route,
      firedAt: new Date(alert.created_at).toISOString(),
    })),
    anomalies: anomalies.map((anomaly) => ({
      metric: anomaly.metric,
      hour: new Date(anomaly.hour).toISOString(),
      value: anomaly.value,
      score: anomaly.score,
    })),
    calls: {
      calls: both(calls, (facts) => facts.calls),
      failedToConnect: both(calls, (facts) => facts.failedToConnect),
      connectFailureRate: both(calls, (facts) => ratio(facts.failedToConnect, facts.calls)),
      relayed: both(calls, (facts) => facts.relayed),
      relayRate: both(calls, (facts) => ratio(facts.relayed, facts.calls)),
      scoredCalls: both(calls, (facts) => facts.scored),
      medianQuality: both(calls, (facts) => facts.medianQuality),
      averageQuality: both(calls, (facts) => facts.averageQuality),
    },
    pageViews: both(views, (facts) => facts.pageViews),
    vitals: Object.fromEntries(
      DIGEST_VITALS.map((name) => {
        const current = views.value.vitals[name];
        const previous = views.previous.vitals[name];
        return [
          name,
          {
            p75: current.p75,
            previousP75: previous.p75,
            count: current.count,
            previousCount: previous.count,
            rating: current.p75 === null ? null : rateVital(name, current.p75),
            previousRating: previous.p75 === null ? null : rateVital(name, previous.p75),
          },
        ];
      }),
    ) as DigestContent['vitals'],
    links:
      appUrl === undefined
        ? {}
        : {
            overview: `${appUrl}/overview?${period}`,
            issues: `${appUrl}/issues`,
            releases: `${appUrl}/releases`,
            calls: `${appUrl}/calls/overview?${period}`,
            vitals: `${appUrl}/vitals?${period}`,
          },
  };
}

/** A number with its change against the period before, as a summary says it. */
function withChange(value: number, previous: number): string {
  if (previous === 0) return value === 0 ? '0' : `${value} (none before)`;
  const change = Math.round((100 * (value - previous)) / previous);
  return `${value} (${change >= 0 ? '+' : ''}${change}%)`;
}

const percent = (value: number | null) => (value === null ? 'n/a' : `${(100 * value).toFixed(1)}%`);

/** The `ai.digest` notification of a digest. */
function digestDraft(project: Pick<Project, 'name'>, content: DigestContent): NotificationDraft {
  const day = content.start.slice(0, 10);
  const title =
    content.period === 'daily'
      ? `Daily digest of ${project.name}: ${day}`
      : `Weekly digest of ${project.name}: week of ${day}`;
  const { sessions, calls } = content;
  const parts = [
    `${withChange(sessions.sessions.value, sessions.sessions.previous)} sessions, ${percent(sessions.errorRate.value)} with errors`,
    `${content.newIssues.total} new issue(s)`,
    `${content.growingIssues.length} growing`,
    `${content.regressions.length} regression(s)`,
    `${content.anomalies.length} anomaly(ies)`,
    `${withChange(calls.calls.value, calls.calls.previous)} calls, ${percent(calls.connectFailureRate.value)} failed to connect, median quality ${calls.medianQuality.value === null ? 'n/a' : calls.medianQuality.value.toFixed(1)}`,
  ];
  const lcp = content.vitals.LCP;
  if (lcp.p75 !== null) parts.push(`LCP p75 ${lcp.p75} ms (${lcp.rating})`);
  return {
    type: 'ai.digest',
    subject: { type: 'ai.digest' },
    throttleKey: `ai.digest:${content.period}`,
    data: {
      title,
      summary: `${parts.join('; ')}.`,
      severity: 'info',
      counts: {
        sessions: sessions.sessions.value,
        sessionsWithErrors: sessions.sessionsWithErrors.value,
        newIssues: content.newIssues.total,
        growingIssues: content.growingIssues.length,
        regressions: content.regressions.length,
        anomalies: content.anomalies.length,
        calls: calls.calls.value,
        failedToConnect: calls.failedToConnect.value,
        pageViews: content.pageViews.value,
      },
      links: content.links,
      digest: content,
    } as NotificationDraft['data'],
  };
}

/** What {@link makeDigest} did. */
export interface MadeDigest {
  digest: AiDigest;
  /** Whether this call stored it (false: the period's digest was there already). */
  created: boolean;
  events: number;
  deliveries: number;
}

/**
 * Makes the project's digest of `[start, end)` once: computes it ({@link buildDigest}), stores it
 * (`ai_digests`, once per project, period and start: a second call returns the stored one and
 * sends nothing) and, unless the period was quiet, sends `ai.digest` through the project's rules
 * in the same transaction. A quiet period's digest is stored (it says `quiet: true`) and notifies
 * nobody.
 *
 * @example
 * ```ts
 * const { digest, created } = await makeDigest(database, project, { period: 'weekly', start, end }, { now: new Date(), appUrl });
 * ```
 */
export async function makeDigest(
  database: Kysely<Database>,
  project: Pick<Project, 'id' | 'organization_id' | 'name'>,
  input: { period: 'daily' | 'weekly'; start: Date; end: Date },
  options: { now: Date; appUrl?: string | undefined },
): Promise<MadeDigest> {
  const content = await buildDigest(database, project.id, input, options);
  return database.transaction().execute(async (transaction) => {
    const stored = await insertDigest(
      transaction,
      project.id,
      { id: createId('dig'), period: input.period, start: input.start, end: input.end, content },
      options.now,
    );
    const made: MadeDigest = { ...stored, events: 0, deliveries: 0 };
    if (!stored.created || content.quiet) return made;
    const notified = await notify(transaction, project, [digestDraft(project, content)], options.now);
    made.events = notified.events.length;
    made.deliveries = notified.deliveries;
    const eventId = notified.events[0];
    if (eventId !== undefined) {
      await setDigestEvent(transaction, project.id, stored.digest.id, eventId);
      made.digest = { ...stored.digest, event_id: eventId };
    }
    return made;
  });
}
