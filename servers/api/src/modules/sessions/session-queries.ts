import { SEVERITY_ORDER } from '@svc/protocol';
import { type ExpressionBuilder, type Kysely, type SqlBool, sql, type Transaction } from 'kysely';
import type { Database } from '../../platform/database/schema.ts';
import { sessionSearchText } from '../../platform/database/session-search.ts';
import type { Chunk } from '../../platform/database/tables/chunks.table.ts';
import type {
  SessionSignal,
  SignalKind,
  SignalSeverity,
} from '../../platform/database/tables/session-signals.table.ts';
import type { Session } from '../../platform/database/tables/sessions.table.ts';
import type { ShareLink } from '../../platform/database/tables/share-links.table.ts';
import { keysetPage } from '../../platform/http/keyset-page.ts';

// The read side of sessions: every query is scoped by a project id first, so a caller can only
// ever reach the rows of the project it passes (the route passes the token's project).

type Executor = Kysely<Database> | Transaction<Database>;

/**
 * `level` and every severity above it, highest first: the `level` filter matches "at least this
 * severe" (the ranking is `@svc/protocol`'s SEVERITY_ORDER).
 */
export function severitiesAtLeast(level: SignalSeverity): SignalSeverity[] {
  return SEVERITY_ORDER.slice(SEVERITY_ORDER.indexOf(level)).reverse();
}

/** What `GET /v1/sessions` can filter on, already validated and converted. */
export interface SessionFilters {
  /** Case-insensitive substring of url, user id, email or name, release or environment. */
  q?: string;
  hasErrors?: boolean;
  /** Browser name, case-insensitive. */
  browser?: string;
  /** OS name, case-insensitive. */
  os?: string;
  device?: string;
  /** Sessions whose level is at least this severe. */
  level?: SignalSeverity;
  hasGaps?: boolean;
  minDurationMs?: number;
  maxDurationMs?: number;
  /** started_at >= from */
  from?: Date;
  /** started_at < to */
  to?: Date;
  /** Exact user id or email. */
  user?: string;
  /** Case-insensitive substring of the url. */
  urlContains?: string;
  environment?: string;
  release?: string;
}

/** A keyset position in the session list (newest first): the last session of a page. */
export interface SessionPosition {
  startedAt: Date;
  id: string;
}

/** `%`, `_` and `\` match literally in a LIKE pattern (backslash is Postgres' default escape). */
export function containsPattern(text: string): string {
  return `%${text.replace(/[\\%_]/g, (character) => `\\${character}`)}%`;
}

type SessionsBuilder = ExpressionBuilder<Database, 'sessions'>;

function hasGapsExpression(where: SessionsBuilder) {
  const missingSeq = where('sessions.chunk_count', '<', where('sessions.max_seq', '+', 1));
  const gapSignal = where.exists(
    where
      .selectFrom('session_signals')
      .select(sql<number>`1`.as('one'))
      .whereRef('session_signals.project_id', '=', 'sessions.project_id')
      .whereRef('session_signals.session_id', '=', 'sessions.id')
      .where('session_signals.kind', '=', 'gap'),
  );
  return { missingSeq, gapSignal };
}

function filterExpressions(where: SessionsBuilder, filters: SessionFilters) {
  const conditions = [];
  if (filters.q !== undefined) {
    const pattern = containsPattern(filters.q);
    // One expression over the six fields, indexed with pg_trgm (migration 2026-11-22-session-search).
    conditions.push(where(sessionSearchText, 'ilike', pattern));
  }
  if (filters.hasErrors !== undefined) {
    conditions.push(where('sessions.error_count', filters.hasErrors ? '>' : '=', 0));
  }
  if (filters.browser !== undefined) {
    conditions.push(where(where.fn('lower', ['sessions.browser_name']), '=', filters.browser.toLowerCase()));
  }
  if (filters.os !== undefined) {
    conditions.push(where(where.fn('lower', ['sessions.os_name']), '=', filters.os.toLowerCase()));
  }
  if (filters.device !== undefined) conditions.push(where('sessions.device', '=', filters.device));
  if (filters.level !== undefined) {
    conditions.push(where('sessions.level', 'in', severitiesAtLeast(filters.level)));
  }
  if (filters.hasGaps !== undefined) {
    const { missingSeq, gapSignal } = hasGapsExpression(where);
    conditions.push(
      filters.hasGaps
        ? where.or([missingSeq, gapSignal])
        : where.and([where.not(missingSeq), where.not(gapSignal)]),
    );
  }
  if (filters.minDurationMs !== undefined) {
    conditions.push(where('sessions.duration_ms', '>=', filters.minDurationMs));
  }
  if (filters.maxDurationMs !== undefined) {
    conditions.push(where('sessions.duration_ms', '<=', filters.maxDurationMs));
  }
  if (filters.from !== undefined) conditions.push(where('sessions.started_at', '>=', filters.from));
  if (filters.to !== undefined) conditions.push(where('sessions.started_at', '<', filters.to));
  if (filters.user !== undefined) {
    conditions.push(
      where.or([
        where('sessions.user_id', '=', filters.user),
        where('sessions.user_email', '=', filters.user),
      ]),
    );
  }
  if (filters.urlContains !== undefined) {
    conditions.push(where('sessions.url', 'ilike', containsPattern(filters.urlContains)));
  }
  if (filters.environment !== undefined) {
    conditions.push(where('sessions.environment', '=', filters.environment));
  }
  if (filters.release !== undefined) conditions.push(where('sessions.release', '=', filters.release));
  return conditions;
}

/** A session row plus whether it has gaps (missing seqs or SDK gap signals). */
export type SessionListRow = Session & { has_gap_signal: SqlBool };

/**
 * One page of the project's sessions, newest first (`started_at desc, id desc`, the
 * `sessions_project_started` index), after `after` when given. `next` is the position to
 * continue from when there are more.
 *
 * @example
 * ```ts
 * const { sessions, next } = await findSessionsPage(database, project.id, { filters: { hasErrors: true }, limit: 50 });
 * ```
 */
export async function findSessionsPage(
  database: Executor,
  projectId: string,
  options: { filters: SessionFilters; after?: SessionPosition; limit: number },
): Promise<{ sessions: SessionListRow[]; next?: SessionPosition }> {
  const { after } = options;
  const rows = await database
    .selectFrom('sessions')
    .selectAll('sessions')
    .select((select) => hasGapsExpression(select).gapSignal.as('has_gap_signal'))
    .where('sessions.project_id', '=', projectId)
    .where((where) =>
      where.and([
        ...filterExpressions(where, options.filters),
        ...(after === undefined
          ? []
          : [
              where(
                where.refTuple('sessions.started_at', 'sessions.id'),
                '<',
                where.tuple(after.startedAt, after.id),
              ),
            ]),
      ]),
    )
    .orderBy('sessions.started_at', 'desc')
    .orderBy('sessions.id', 'desc')
    .limit(options.limit + 1)
    .execute();
  const { page: sessions, more } = keysetPage(rows, options.limit);
  return more === undefined ? { sessions } : { sessions, next: { startedAt: more.started_at, id: more.id } };
}

/** The session, or `undefined` when the project has no such session. */
export async function findSession(
  database: Executor,
  projectId: string,
  sessionId: string,
): Promise<Session | undefined> {
  return database
    .selectFrom('sessions')
    .selectAll()
    .where('project_id', '=', projectId)
    .where('id', '=', sessionId)
    .executeTakeFirst();
}

/** The session's chunk rows in seq order, from `fromSeq` on, at most `limit` of them. */
export async function listChunks(
  database: Executor,
  projectId: string,
  sessionId: string,
  options: { fromSeq?: number; limit?: number } = {},
): Promise<Chunk[]> {
  let query = database
    .selectFrom('chunks')
    .selectAll()
    .where('project_id', '=', projectId)
    .where('session_id', '=', sessionId)
    .orderBy('seq', 'asc');
  if (options.fromSeq !== undefined) query = query.where('seq', '>=', options.fromSeq);
  if (options.limit !== undefined) query = query.limit(options.limit);
  return query.execute();
}

/** One chunk row, or `undefined`. */
export async function findChunk(
  database: Executor,
  projectId: string,
  sessionId: string,
  seq: number,
): Promise<Chunk | undefined> {
  return database
    .selectFrom('chunks')
    .selectAll()
    .where('project_id', '=', projectId)
    .where('session_id', '=', sessionId)
    .where('seq', '=', seq)
    .executeTakeFirst();
}

/** A position in a session's events: the chunk's seq and the event's index in its chunk. */
export interface EventPosition {
  seq: number;
  index: number;
}

/**
 * The session's signals of `kinds` in (seq, index) order, after `after` when given, at most
 * `limit` (+ `next` when there are more).
 */
export async function findSignalsPage<Kind extends SignalKind>(
  database: Executor,
  projectId: string,
  sessionId: string,
  options: { kinds: readonly Kind[]; after?: EventPosition; limit: number },
): Promise<{ signals: (SessionSignal & { kind: Kind })[]; next?: EventPosition }> {
  const { after } = options;
  let query = database
    .selectFrom('session_signals')
    .selectAll()
    .where('project_id', '=', projectId)
    .where('session_id', '=', sessionId)
    .where('kind', 'in', options.kinds)
    // A custom event without a severity is a signal for notification rules, not a problem.
    .where('severity', 'is not', null)
    .orderBy('seq', 'asc')
    .orderBy('event_index', 'asc')
    .limit(options.limit + 1);
  if (after !== undefined) {
    query = query.where((where) =>
      where(where.refTuple('seq', 'event_index'), '>', where.tuple(after.seq, after.index)),
    );
  }
  const rows = (await query.execute()) as (SessionSignal & { kind: Kind })[];
  const { page: signals, more } = keysetPage(rows, options.limit);
  return more === undefined ? { signals } : { signals, next: { seq: more.seq, index: more.event_index } };
}

/** The sessions of a visit in the project, oldest first, at most `limit` (+ whether there were more). */
export async function findVisitSessions(
  database: Executor,
  projectId: string,
  visitId: string,
  limit: number,
): Promise<{ sessions: SessionListRow[]; truncated: boolean }> {
  const rows = await database
    .selectFrom('sessions')
    .selectAll('sessions')
    .select((select) => hasGapsExpression(select).gapSignal.as('has_gap_signal'))
    .where('sessions.project_id', '=', projectId)
    .where('sessions.visit_id', '=', visitId)
    .orderBy('sessions.started_at', 'asc')
    .orderBy('sessions.id', 'asc')
    .limit(limit + 1)
    .execute();
  return { sessions: rows.slice(0, limit), truncated: rows.length > limit };
}

/** Stores a share link (only the token's hash). */
export async function createShareLink(
  database: Executor,
  values: { id: string; projectId: string; sessionId: string; tokenHash: Uint8Array; expiresAt: Date },
): Promise<ShareLink> {
  return database
    .insertInto('share_links')
    .values({
      id: values.id,
      project_id: values.projectId,
      session_id: values.sessionId,
      token_hash: values.tokenHash,
      expires_at: values.expiresAt,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** The share link with this token hash, unless it expired at `now` (or never existed). */
export async function findActiveShareLink(
  database: Executor,
  tokenHash: Uint8Array,
  now: Date,
): Promise<ShareLink | undefined> {
  return database
    .selectFrom('share_links')
    .selectAll()
    .where('token_hash', '=', tokenHash)
    .where('expires_at', '>', now)
    .executeTakeFirst();
}
