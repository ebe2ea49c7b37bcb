import { type ExpressionBuilder, type Kysely, sql } from 'kysely';
import type { Database } from '../../platform/database/schema.ts';
import type { Call, CallFinding, CallItem, CallTrack } from '../../platform/database/tables/calls.table.ts';
import { keysetPage } from '../../platform/http/keyset-page.ts';
import { findSeriesPieces } from './call-progress-repository.ts';
import { joinSeries, type Series, seriesLength } from './series.ts';

/** Largest page of calls. */
export const MAX_CALLS_LIMIT = 200;
export const DEFAULT_CALLS_LIMIT = 50;

// The read side of calls: every query is scoped by a project id first, so a caller can only ever
// reach the rows of the project it passes (the route passes the token's project).

/** What `GET /v1/calls` can filter on, already validated and converted. */
export interface CallFilters {
  /** started_at >= from */
  from?: Date;
  /** started_at < to */
  to?: Date;
  relayed?: boolean;
  failedToConnect?: boolean;
  networkType?: string;
  /** quality_score >= minQuality (calls without a score never match a quality bound). */
  minQuality?: number;
  maxQuality?: number;
  /** Browser name, case-insensitive. */
  browser?: string;
  /** OS name, case-insensitive. */
  os?: string;
  device?: string;
  release?: string;
  /** The session's user id. */
  endUser?: string;
  /** Calls with at least one finding of severity low or higher. */
  hasIssue?: boolean;
  sessionId?: string;
}

/** A keyset position in the call list (newest first): the last call of a page. */
export interface CallPosition {
  startedAt: Date;
  id: string;
}

type CallsBuilder = ExpressionBuilder<Database, 'calls'>;

function filterExpressions(where: CallsBuilder, filters: CallFilters) {
  const conditions = [];
  if (filters.from !== undefined) conditions.push(where('calls.started_at', '>=', filters.from));
  if (filters.to !== undefined) conditions.push(where('calls.started_at', '<', filters.to));
  if (filters.relayed !== undefined) conditions.push(where('calls.relayed', '=', filters.relayed));
  if (filters.failedToConnect !== undefined)
    conditions.push(where('calls.failed_to_connect', '=', filters.failedToConnect));
  if (filters.networkType !== undefined)
    conditions.push(where('calls.network_type', '=', filters.networkType));
  if (filters.minQuality !== undefined)
    conditions.push(where('calls.quality_score', '>=', filters.minQuality));
  if (filters.maxQuality !== undefined)
    conditions.push(where('calls.quality_score', '<=', filters.maxQuality));
  if (filters.browser !== undefined)
    conditions.push(where(where.fn('lower', ['calls.browser_name']), '=', filters.browser.toLowerCase()));
  if (filters.os !== undefined)
    conditions.push(where(where.fn('lower', ['calls.os_name']), '=', filters.os.toLowerCase()));
  if (filters.device !== undefined) conditions.push(where('calls.device', '=', filters.device));
  if (filters.release !== undefined) conditions.push(where('calls.release', '=', filters.release));
  if (filters.endUser !== undefined) conditions.push(where('calls.end_user_id', '=', filters.endUser));
  if (filters.hasIssue !== undefined) conditions.push(where('calls.has_issue', '=', filters.hasIssue));
  if (filters.sessionId !== undefined) conditions.push(where('calls.session_id', '=', filters.sessionId));
  return conditions;
}

/**
 * A page of the project's calls, newest first (keyset on `(started_at, id)`), matching every
 * filter.
 */
export async function findCallsPage(
  database: Kysely<Database>,
  projectId: string,
  options: { filters: CallFilters; after?: CallPosition; limit: number },
): Promise<{ calls: Call[]; next?: CallPosition }> {
  const { after } = options;
  let query = database
    .selectFrom('calls')
    .selectAll()
    .where('calls.project_id', '=', projectId)
    .where((where) => where.and(filterExpressions(where, options.filters)));
  if (after !== undefined) {
    query = query.where((where) =>
      where(where.refTuple('calls.started_at', 'calls.id'), '<', where.tuple(after.startedAt, after.id)),
    );
  }
  const rows = await query
    .orderBy('calls.started_at', 'desc')
    .orderBy('calls.id', 'desc')
    .limit(options.limit + 1)
    .execute();
  const { page: calls, more } = keysetPage(rows, options.limit);
  return more === undefined ? { calls } : { calls, next: { startedAt: more.started_at, id: more.id } };
}

/** Most event markers one call detail returns (a call emits a few dozen; this bounds a runaway one). */
const MAX_CALL_EVENTS = 5_000;

/**
 * One call with its tracks' series, its event markers and its findings. A call still going on
 * has its newer samples in `call_series_pieces`: they are joined after its rows' series (and
 * counted in its tracks' `sample_count`).
 */
export async function findCallDetail(
  database: Kysely<Database>,
  projectId: string,
  callId: string,
): Promise<
  | {
      call: Call;
      tracks: CallTrack[];
      events: Pick<CallItem, 'seq' | 'event_index' | 'item'>[];
      findings: CallFinding[];
    }
  | undefined
> {
  const call = await database
    .selectFrom('calls')
    .selectAll()
    .where('project_id', '=', projectId)
    .where('id', '=', callId)
    .executeTakeFirst();
  if (call === undefined) return undefined;
  const [tracks, events, findings, segments] = await Promise.all([
    database
      .selectFrom('call_tracks')
      .selectAll()
      .where('project_id', '=', projectId)
      .where('call_id', '=', callId)
      .orderBy('kind')
      .orderBy('dir')
      .orderBy('track_id')
      .execute(),
    database
      .selectFrom('call_items')
      .select(['seq', 'event_index', 'item'])
      .where('project_id', '=', projectId)
      .where('session_id', '=', call.session_id)
      .where('pc', '=', call.pc)
      .where('type', '=', 'call.event')
      .orderBy('t')
      .orderBy('seq')
      .orderBy('event_index')
      .limit(MAX_CALL_EVENTS)
      .execute(),
    database
      .selectFrom('call_findings')
      .selectAll()
      .where('project_id', '=', projectId)
      .where('session_id', '=', call.session_id)
      .where('pc', '=', call.pc)
      .orderBy('t')
      .orderBy('kind')
      .execute(),
    findSeriesPieces(database, projectId, callId),
  ]);
  if (segments.size === 0) return { call, tracks, events, findings };
  const joined = (series: unknown, trackId: string) =>
    joinSeries([series as Series, ...(segments.get(trackId) ?? [])]);
  return {
    call: { ...call, series: joined(call.series, '') },
    tracks: tracks.map((track) => {
      const series = joined(track.series, track.track_id);
      return { ...track, sample_count: seriesLength(series), series };
    }),
    events,
    findings,
  };
}

/** The findings of a session (every call's, and the session-wide ones), in time order. */
export async function findSessionFindings(
  database: Kysely<Database>,
  projectId: string,
  sessionId: string,
): Promise<CallFinding[]> {
  return database
    .selectFrom('call_findings')
    .selectAll()
    .where('project_id', '=', projectId)
    .where('session_id', '=', sessionId)
    .orderBy('t')
    .orderBy('pc')
    .orderBy('kind')
    .execute();
}

/** Per group of a breakdown. */
interface CallBreakdownRow {
  key: string | null;
  calls: number;
  failedToConnect: number;
  relayed: number;
  averageQuality: number | null;
}

/** What `GET /v1/calls/overview` reports over the calls started in `[from, to)`. */
export interface CallOverview {
  calls: number;
  failedToConnect: number;
  relayed: number;
  /** Calls with a setup time, and its p50/p90/p99 (linear interpolation between ranks). */
  setup: { count: number; p50: number | null; p90: number | null; p99: number | null };
  /** Calls with a quality score in each of the ten buckets [0,10), [10,20), ..., [90,100]. */
  qualityBuckets: number[];
  scored: number;
  topFailureReasons: Array<{ reason: string; calls: number }>;
  breakdowns: Record<'networkType' | 'browser' | 'device' | 'release', CallBreakdownRow[]>;
}

/** Most groups per breakdown and failure reasons listed (largest first). */
const OVERVIEW_TOP = 20;

/** One row of the overview's grouping sets: which set it belongs to, its key and its counts. */
interface OverviewGroupRow {
  set: 'all' | 'networkType' | 'browser' | 'device' | 'release' | 'bucket' | 'failure';
  key: string | number | null;
  calls: number;
  failed: number;
  relayed: number;
  quality: number | null;
  setup_count: number;
  scored: number;
}

/**
 * The overview of the project's calls started in `[from, to)`: rates, setup-time percentiles
 * (`percentile_cont`, the same linear interpolation numpy and most dashboards use), the quality
 * histogram, the most frequent failure reasons and breakdowns. Two statements, each one scan of
 * the range: every count, histogram bucket, failure reason and breakdown in one `group by
 * grouping sets`, and the percentiles (a sort of the setup times) in the other.
 */
export async function callOverview(
  database: Kysely<Database>,
  projectId: string,
  range: { from?: Date; to?: Date },
): Promise<CallOverview> {
  const scope = (where: CallsBuilder) =>
    where.and([
      where('calls.project_id', '=', projectId),
      ...filterExpressions(where, { from: range.from, to: range.to }),
    ]);
  const inRange = database
    .selectFrom('calls')
    .where(scope)
    .select([
      'network_type',
      'browser_name',
      'device',
      'release',
      'failed_to_connect',
      'relayed',
      'quality_score',
      'setup_ms',
      // least() ignores nulls: an unscored call must stay out of every bucket.
      sql<number | null>`case when quality_score is not null then least(quality_score / 10, 9) end`.as(
        'bucket',
      ),
      sql<string | null>`case when failed_to_connect then coalesce(failure_reason, 'unknown') end`.as(
        'failure',
      ),
    ]);

  const [grouped, setup] = await Promise.all([
    database
      .selectFrom(inRange.as('c'))
      .select([
        sql<OverviewGroupRow['set']>`case
          when grouping(network_type) = 0 then 'networkType'
          when grouping(browser_name) = 0 then 'browser'
          when grouping(device) = 0 then 'device'
          when grouping(release) = 0 then 'release'
          when grouping(bucket) = 0 then 'bucket'
          when grouping(failure) = 0 then 'failure'
          else 'all' end`.as('set'),
        sql<
          string | number | null
        >`coalesce(network_type, browser_name, device, release, bucket::text, failure)`.as('key'),
        sql<number>`count(*)::int`.as('calls'),
        sql<number>`count(*) filter (where failed_to_connect)::int`.as('failed'),
        sql<number>`count(*) filter (where relayed)::int`.as('relayed'),
        sql<number | null>`avg(quality_score)::float8`.as('quality'),
        sql<number>`count(setup_ms)::int`.as('setup_count'),
        sql<number>`count(quality_score)::int`.as('scored'),
      ])
      .groupBy(
        sql`grouping sets ((), (network_type), (browser_name), (device), (release), (bucket), (failure))`,
      )
      .execute() as Promise<OverviewGroupRow[]>,
    database
      .selectFrom('calls')
      .where(scope)
      .where('setup_ms', 'is not', null)
      .select(
        sql<
          number[] | null
        >`percentile_cont(array[0.5, 0.9, 0.99]::float8[]) within group (order by setup_ms)`.as('setup'),
      )
      .executeTakeFirstOrThrow(),
  ]);

  const setOf = (name: OverviewGroupRow['set']) => grouped.filter((row) => row.set === name);
  const largestFirst = (rows: OverviewGroupRow[]) =>
    rows
      .sort((a, b) => b.calls - a.calls || String(a.key ?? '').localeCompare(String(b.key ?? '')))
      .slice(0, OVERVIEW_TOP);
  const totals = setOf('all')[0];
  const qualityBuckets = Array.from({ length: 10 }, () => 0);
  for (const row of setOf('bucket')) if (row.key !== null) qualityBuckets[Number(row.key)] = row.calls;
  const breakdown = (name: keyof CallOverview['breakdowns']): CallBreakdownRow[] =>
    largestFirst(setOf(name)).map((row) => ({
      key: row.key === null ? null : String(row.key),
      calls: row.calls,
      failedToConnect: row.failed,
      relayed: row.relayed,
      averageQuality: row.quality,
    }));
  const [p50, p90, p99] = setup.setup ?? [null, null, null];
  return {
    calls: totals?.calls ?? 0,
    failedToConnect: totals?.failed ?? 0,
    relayed: totals?.relayed ?? 0,
    setup: { count: totals?.setup_count ?? 0, p50: p50 ?? null, p90: p90 ?? null, p99: p99 ?? null },
    qualityBuckets,
    scored: totals?.scored ?? 0,
    topFailureReasons: largestFirst(setOf('failure').filter((row) => row.key !== null)).map((row) => ({
      reason: String(row.key),
      calls: row.calls,
    })),
    breakdowns: {
      networkType: breakdown('networkType'),
      browser: breakdown('browser'),
      device: breakdown('device'),
      release: breakdown('release'),
    },
  };
}
