// The explanation of an issue cluster over its occurrences: where it concentrates (releases,
// browsers, operating systems, devices, environments, networks) against the project's sessions of
// the same period, and the likely causes from the tables of causes.ts read on its latest occurrence.
// Deterministic; every statement is bounded by the cluster and a 30-day window.

import { type Kysely, sql } from 'kysely';
import type { Database } from '../../platform/database/schema.ts';
import type { IssueCluster } from '../../platform/database/tables/issues.table.ts';
import { findLatestClusterError } from '../issues/index.ts';
import { type Cause, type CauseContext, detectorCauses, errorCauses, errorClass } from './causes.ts';

/** The period looked at: the 30 days up to the cluster's newest occurrence. */
const WINDOW_MS = 30 * 24 * 3600 * 1000;
/** Values listed per dimension. */
const TOP_VALUES = 5;
/** A value is a concentration when it holds this share of the occurrences… */
const CONCENTRATION_SHARE = 0.5;
/** …and this many times its share of the project's sessions (or calls)… */
const CONCENTRATION_LIFT = 1.5;
/** …over at least this many occurrences. */
const CONCENTRATION_MIN = 3;
/** Example sessions listed. */
const EXAMPLES = 5;

export const DIMENSIONS = ['release', 'browser', 'os', 'device', 'environment', 'network'] as const;
type Dimension = (typeof DIMENSIONS)[number];

/** One value of a dimension among the occurrences, against the project's baseline. */
interface DimensionValue {
  value: string;
  occurrences: number;
  /** Its share of the occurrences (0..1). */
  share: number;
  /** Its share of the project's sessions (calls, for `network`) in the same period (0..1). */
  baselineShare: number;
  /** `share / baselineShare`: above 1, the issue is over-represented there. */
  lift: number | null;
}

/** A value where the issue concentrates. */
interface Concentration extends DimensionValue {
  dimension: Dimension;
}

/** The explanation of an issue cluster. */
export interface ClusterExplanation {
  subject: { type: 'issue'; id: string };
  summary: string;
  cluster: {
    kind: string;
    title: string;
    severity: string;
    status: string;
    firstSeenAt: string;
    lastSeenAt: string;
  };
  /** The period the numbers cover. */
  window: { from: string; to: string };
  /** Occurrences and sessions in the period. */
  occurrences: number;
  sessions: number;
  concentrations: Concentration[];
  breakdown: Record<Dimension, DimensionValue[]>;
  causes: Cause[];
  /** The latest occurrence: its session and its evidence id in that session's transcript. */
  latest?: { sessionId: string; evidenceId: string; evidence: Record<string, unknown> };
  exampleSessions: string[];
}

interface GroupRow {
  /** Null: the total. */
  dimension: Dimension | null;
  value: string;
  count: number;
}

/** The SQL naming the dimension of a grouping-sets row (null for the total) and its value. */
function dimensionColumns(columns: ReadonlyArray<readonly [Dimension, string]>) {
  const dimension = sql.join(
    columns.map(([name, column]) => sql`when grouping(${sql.raw(column)}) = 0 then ${sql.lit(name)}`),
    sql` `,
  );
  const value = sql.join(
    columns.map(([, column]) => sql`when grouping(${sql.raw(column)}) = 0 then ${sql.raw(column)}`),
    sql` `,
  );
  const sets = sql.join([sql`()`, ...columns.map(([, column]) => sql`(${sql.raw(column)})`)], sql`, `);
  return {
    select: sql`case ${dimension} else null end as dimension, coalesce(case ${value} else null end, 'unknown') as value`,
    sets,
  };
}

function toGroups(
  rows: ReadonlyArray<{ dimension: string | null; value: string; count: number }>,
): GroupRow[] {
  return rows.map((row) => ({
    dimension: row.dimension as Dimension | null,
    value: row.value,
    count: Number(row.count),
  }));
}

const OCCURRENCE_COLUMNS = [
  ['release', 's.release'],
  ['browser', 's.browser_name'],
  ['os', 's.os_name'],
  ['device', 's.device'],
  ['environment', 's.environment'],
  ['network', 'c.network_type'],
] as const;
const SESSION_COLUMNS = [
  ['release', 'release'],
  ['browser', 'browser_name'],
  ['os', 'os_name'],
  ['device', 'device'],
  ['environment', 'environment'],
] as const;
const CALL_COLUMNS = [['network', 'network_type']] as const;

/** The occurrences in the window by each dimension (one statement, grouping sets). */
async function occurrenceGroups(
  database: Kysely<Database>,
  projectId: string,
  clusterId: string,
  from: Date,
  to: Date,
): Promise<GroupRow[]> {
  const { select, sets } = dimensionColumns(OCCURRENCE_COLUMNS);
  const result = await sql<{ dimension: string | null; value: string; count: number }>`
    select ${select}, count(*)::int as count
    from cluster_occurrences o
    join sessions s on s.project_id = o.project_id and s.id = o.session_id
    left join calls c on o.occurrence_key like 'finding:%' and c.project_id = o.project_id
      and c.session_id = o.session_id and c.pc = split_part(o.occurrence_key, ':', 2)
    where o.project_id = ${projectId} and o.cluster_id = ${clusterId} and o.t >= ${from} and o.t < ${to}
    group by grouping sets (${sets})
  `.execute(database);
  return toGroups(result.rows);
}

/** The project's sessions (`sessions`) and calls (`calls`, for `network`) in the window by each dimension. */
async function baselineGroups(
  database: Kysely<Database>,
  projectId: string,
  from: Date,
  to: Date,
): Promise<{ sessions: GroupRow[]; calls: GroupRow[] }> {
  const bySession = dimensionColumns(SESSION_COLUMNS);
  const byCall = dimensionColumns(CALL_COLUMNS);
  const [sessions, calls] = await Promise.all([
    sql<{ dimension: string | null; value: string; count: number }>`
      select ${bySession.select}, count(*)::int as count
      from sessions
      where project_id = ${projectId} and started_at >= ${from} and started_at < ${to}
      group by grouping sets (${bySession.sets})
    `.execute(database),
    sql<{ dimension: string | null; value: string; count: number }>`
      select ${byCall.select}, count(*)::int as count
      from calls
      where project_id = ${projectId} and started_at >= ${from} and started_at < ${to}
      group by grouping sets (${byCall.sets})
    `.execute(database),
  ]);
  return { sessions: toGroups(sessions.rows), calls: toGroups(calls.rows) };
}

function shareOf(count: number, total: number): number {
  return total === 0 ? 0 : Math.round((count / total) * 1000) / 1000;
}

function cutTitle(title: string): string {
  return title.length > 120 ? `${title.slice(0, 119)}…` : title;
}

/** The likely causes of a cluster, read on its latest occurrence, and that occurrence. */
async function latestCauses(
  database: Kysely<Database>,
  projectId: string,
  cluster: IssueCluster,
): Promise<{ causes: Cause[]; latest?: ClusterExplanation['latest'] }> {
  if (cluster.kind === 'error') {
    const latest = await findLatestClusterError(database, projectId, cluster.id);
    const name = latest?.name ?? cluster.title.split(':')[0] ?? 'Error';
    const message = latest?.message ?? '';
    return {
      causes: errorCauses(name, message, {}),
      ...(latest === undefined
        ? {}
        : {
            latest: {
              sessionId: latest.session_id,
              evidenceId: await errorEvidenceId(database, projectId, cluster.id, latest.session_id),
              evidence: { name, ...(message === '' ? {} : { message }), class: errorClass(name, message) },
            },
          }),
    };
  }
  const row = await database
    .selectFrom('cluster_occurrences as o')
    .innerJoin('call_findings as f', (join) =>
      join
        .onRef('f.project_id', '=', 'o.project_id')
        .onRef('f.session_id', '=', 'o.session_id')
        .on(
          'o.occurrence_key',
          '=',
          sql<string>`'finding:' || ${sql.ref('f.pc')} || ':' || ${sql.ref('f.kind')}`,
        ),
    )
    .leftJoin('calls as c', (join) =>
      join
        .onRef('c.project_id', '=', 'f.project_id')
        .onRef('c.session_id', '=', 'f.session_id')
        .onRef('c.pc', '=', 'f.pc'),
    )
    .select(['o.session_id', 'o.occurrence_key', 'f.evidence', 'c.relayed', 'c.network_type', 'c.protocol'])
    .where('o.project_id', '=', projectId)
    .where('o.cluster_id', '=', cluster.id)
    .orderBy('o.seen_at', 'desc')
    .orderBy('o.t', 'desc')
    .limit(1)
    .executeTakeFirst();
  if (row === undefined) return { causes: detectorCauses(cluster.kind, {}, {}) };
  const context: CauseContext =
    row.relayed === null
      ? {}
      : { call: { relayed: row.relayed, networkType: row.network_type, protocol: row.protocol } };
  return {
    causes: detectorCauses(cluster.kind, row.evidence, context),
    latest: { sessionId: row.session_id, evidenceId: row.occurrence_key, evidence: row.evidence },
  };
}

/** The transcript's evidence id (`<seq>.<index>`) of the newest occurrence of an error cluster in a session. */
async function errorEvidenceId(
  database: Kysely<Database>,
  projectId: string,
  clusterId: string,
  sessionId: string,
): Promise<string> {
  const row = await database
    .selectFrom('cluster_occurrences')
    .select('occurrence_key')
    .where('project_id', '=', projectId)
    .where('cluster_id', '=', clusterId)
    .where('session_id', '=', sessionId)
    .orderBy('t', 'desc')
    .limit(1)
    .executeTakeFirst();
  const [, seq, index] = (row?.occurrence_key ?? 'error:0:0').split(':');
  return `${seq}.${index}`;
}

/**
 * The explanation of an issue cluster: where its occurrences of the 30 days up to its newest one
 * concentrate against the project's sessions of the same period, and its likely causes.
 *
 * @example
 * ```ts
 * const explanation = await explainCluster(database, project.id, cluster);
 * explanation.concentrations[0]; // { dimension: 'release', value: '4.2.0', share: 0.92, baselineShare: 0.41, lift: 2.24, … }
 * ```
 */
export async function explainCluster(
  database: Kysely<Database>,
  projectId: string,
  cluster: IssueCluster,
): Promise<ClusterExplanation> {
  // The period: the 30 days up to the newest occurrence (by when it happened, the clock the
  // sessions' start times are on).
  const bounds = await database
    .selectFrom('cluster_occurrences')
    .select((expression) => [expression.fn.min('t').as('first'), expression.fn.max('t').as('last')])
    .where('project_id', '=', projectId)
    .where('cluster_id', '=', cluster.id)
    .executeTakeFirst();
  const last =
    bounds?.last === null || bounds?.last === undefined
      ? new Date(cluster.last_seen_at)
      : new Date(bounds.last);
  const first = bounds?.first === null || bounds?.first === undefined ? last : new Date(bounds.first);
  const to = new Date(last.getTime() + 1);
  const from = new Date(Math.max(first.getTime(), to.getTime() - WINDOW_MS));
  const [occurrenceRows, baselineRows, causes, sessions, examples] = await Promise.all([
    occurrenceGroups(database, projectId, cluster.id, from, to),
    baselineGroups(database, projectId, from, to),
    latestCauses(database, projectId, cluster),
    database
      .selectFrom('cluster_occurrences')
      .select(sql<number>`count(distinct session_id)::int`.as('sessions'))
      .where('project_id', '=', projectId)
      .where('cluster_id', '=', cluster.id)
      .where('t', '>=', from)
      .where('t', '<', to)
      .executeTakeFirst(),
    database
      .selectFrom('cluster_occurrences')
      .select('session_id')
      .where('project_id', '=', projectId)
      .where('cluster_id', '=', cluster.id)
      .groupBy('session_id')
      .orderBy(sql`max(t)`, 'desc')
      .limit(EXAMPLES)
      .execute(),
  ]);
  const total = occurrenceRows.find((row) => row.dimension === null)?.count ?? 0;
  const sessionTotal = baselineRows.sessions.find((row) => row.dimension === null)?.count ?? 0;
  const callTotal = baselineRows.calls.find((row) => row.dimension === null)?.count ?? 0;
  const breakdown = Object.fromEntries(
    DIMENSIONS.map((dimension) => [dimension, [] as DimensionValue[]]),
  ) as Record<Dimension, DimensionValue[]>;
  const concentrations: Concentration[] = [];
  for (const dimension of DIMENSIONS) {
    // An error happens outside calls: it has no network.
    if (dimension === 'network' && cluster.kind === 'error') continue;
    const rows = occurrenceRows
      .filter((row) => row.dimension === dimension)
      .sort((a, b) => b.count - a.count || a.value.localeCompare(b.value));
    const base = dimension === 'network' ? callTotal : sessionTotal;
    const baselines = dimension === 'network' ? baselineRows.calls : baselineRows.sessions;
    for (const row of rows.slice(0, TOP_VALUES)) {
      const baseline =
        baselines.find((candidate) => candidate.dimension === dimension && candidate.value === row.value)
          ?.count ?? 0;
      const share = shareOf(row.count, total);
      const baselineShare = shareOf(baseline, base);
      const value: DimensionValue = {
        value: row.value,
        occurrences: row.count,
        share,
        baselineShare,
        lift: baselineShare === 0 ? null : Math.round((share / baselineShare) * 100) / 100,
      };
      breakdown[dimension].push(value);
      if (
        row.value !== 'unknown' &&
        row.count >= CONCENTRATION_MIN &&
        share >= CONCENTRATION_SHARE &&
        (value.lift === null || value.lift >= CONCENTRATION_LIFT)
      ) {
        concentrations.push({ dimension, ...value });
      }
    }
  }
  concentrations.sort(
    (a, b) =>
      (b.lift ?? Number.POSITIVE_INFINITY) - (a.lift ?? Number.POSITIVE_INFINITY) || b.share - a.share,
  );
  const sessionCount = Number(sessions?.sessions ?? 0);
  const where =
    concentrations.length === 0
      ? "It is spread across releases, browsers and devices like the project's sessions."
      : `It concentrates in ${concentrations
          .slice(0, 3)
          .map(
            (concentration) =>
              `${concentration.dimension} ${concentration.value} (${Math.round(concentration.share * 100)}% of occurrences, ${Math.round(
                concentration.baselineShare * 100,
              )}% of ${concentration.dimension === 'network' ? 'calls' : 'sessions'})`,
          )
          .join(', ')}.`;
  const cause = causes.causes[0];
  const summary = `${cutTitle(cluster.title)}: ${total} occurrence${total === 1 ? '' : 's'} in ${sessionCount} session${
    sessionCount === 1 ? '' : 's'
  } over the period. ${where}${cause === undefined ? '' : ` Most likely: ${cause.title.charAt(0).toLowerCase()}${cause.title.slice(1)}.`}`;
  return {
    subject: { type: 'issue', id: cluster.id },
    summary,
    cluster: {
      kind: cluster.kind,
      title: cluster.title,
      severity: cluster.severity,
      status: cluster.status,
      firstSeenAt: new Date(cluster.first_seen_at).toISOString(),
      lastSeenAt: new Date(cluster.last_seen_at).toISOString(),
    },
    window: { from: from.toISOString(), to: to.toISOString() },
    occurrences: total,
    sessions: sessionCount,
    concentrations,
    breakdown,
    causes: causes.causes,
    ...(causes.latest === undefined ? {} : { latest: causes.latest }),
    exampleSessions: examples.map((row) => row.session_id),
  };
}
