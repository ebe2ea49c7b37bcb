import { CompiledQuery, type Kysely, sql, type Transaction } from 'kysely';
import type { Database } from '../../platform/database/schema.ts';
import type { DsarManifest, DsarRequest } from '../../platform/database/tables/dsar.table.ts';
import type { SessionSignal } from '../../platform/database/tables/session-signals.table.ts';
import { createId } from '../../platform/ids.ts';
import { backoffMs, claimStatement, type JobTable, releaseFailedJob } from '../../platform/jobs/queue.ts';

// Access requests (servers/api/README.md, Privacy requests): `dsar_requests` rows, each its own job
// on the server's table queue (src/platform/jobs/queue.ts: skip-locked claim, lease, backoff).

type Executor = Kysely<Database> | Transaction<Database>;

/** The queue of queue.ts: `dsar_requests`, keyed by id. */
const DSAR_REQUESTS: JobTable = { name: 'dsar_requests', key: ['id'] };

/** Attempts of a request's job before it is `failed`. */
const MAX_ATTEMPTS = 5;

/** Whom a request is about: the end user as the SDK identified them (at least one of the two). */
export interface DsarSubject {
  userId?: string | undefined;
  email?: string | undefined;
}

/**
 * Queues an access request of the organization, due now.
 *
 * @example
 * ```ts
 * const request = await createDsarRequest(transaction, { organizationId, subject: { email }, requestedBy: userId, now: new Date() });
 * ```
 */
export async function createDsarRequest(
  executor: Executor,
  request: { organizationId: string; subject: DsarSubject; requestedBy: string; now: Date },
): Promise<DsarRequest> {
  return executor
    .insertInto('dsar_requests')
    .values({
      id: createId('dsar'),
      organization_id: request.organizationId,
      subject_user_id: request.subject.userId ?? null,
      subject_email: request.subject.email ?? null,
      status: 'queued',
      requested_by: request.requestedBy,
      due_at: request.now,
      created_at: request.now,
      updated_at: request.now,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** The organization's request `id`, or undefined (another organization's too). */
export async function findDsarRequest(
  executor: Executor,
  organizationId: string,
  id: string,
): Promise<DsarRequest | undefined> {
  return executor
    .selectFrom('dsar_requests')
    .selectAll()
    .where('organization_id', '=', organizationId)
    .where('id', '=', id)
    .executeTakeFirst();
}

/** Up to `limit` of the organization's requests, newest first, older than `before` when given. */
export async function listDsarRequests(
  executor: Executor,
  organizationId: string,
  options: { before?: string | undefined; limit: number },
): Promise<DsarRequest[]> {
  let query = executor
    .selectFrom('dsar_requests')
    .selectAll()
    .where('organization_id', '=', organizationId)
    .orderBy('id', 'desc')
    .limit(options.limit);
  if (options.before !== undefined) query = query.where('id', '<', options.before);
  return query.execute();
}

/** A request a worker holds for one attempt. */
export interface ClaimedDsarRequest {
  id: string;
  organizationId: string;
  subject: DsarSubject;
  /** This attempt's number (the claim counts it). */
  attempt: number;
}

/** The claim of due requests ($1 now, $2 the lease's end, $3 the limit). */
const CLAIM_DSAR_REQUESTS = claimStatement(DSAR_REQUESTS, {
  now: '$1::timestamptz',
  leaseUntil: '$2::timestamptz',
  limit: '$3::int',
  ready: "status in ('queued', 'running')",
  set: "status = 'running', started_at = coalesce(started_at, $1::timestamptz), updated_at = $1::timestamptz",
  returning: ['id', 'organization_id', 'subject_user_id', 'subject_email', 'attempts'],
});

/**
 * Claims up to `limit` due requests (queued, or running with their lease over: their worker died),
 * each `running` and leased until `now + leaseMs`. Concurrent workers, in this process or others on
 * the same PostgreSQL, never claim the same request (`for update skip locked`).
 */
export async function claimDsarRequests(
  database: Kysely<Database>,
  options: { now: Date; leaseMs: number; limit: number },
): Promise<ClaimedDsarRequest[]> {
  const { rows } = await database.executeQuery<{
    id: string;
    organization_id: string;
    subject_user_id: string | null;
    subject_email: string | null;
    attempts: number;
  }>(
    CompiledQuery.raw(CLAIM_DSAR_REQUESTS, [
      options.now,
      new Date(options.now.getTime() + options.leaseMs),
      Math.max(1, Math.floor(options.limit)),
    ]),
  );
  return rows.map((row) => ({
    id: row.id,
    organizationId: row.organization_id,
    subject: { userId: row.subject_user_id ?? undefined, email: row.subject_email ?? undefined },
    attempt: row.attempts,
  }));
}

/**
 * Ends an attempt that gathered its manifest: `ready` until `expiresAt`. Only while the attempt
 * still holds the request (a worker whose lease ran out and whose request another took changes
 * nothing). Resolves with whether it did.
 */
export async function completeDsarRequest(
  executor: Executor,
  claimed: ClaimedDsarRequest,
  manifest: DsarManifest,
  times: { now: Date; expiresAt: Date },
): Promise<boolean> {
  const updated = await executor
    .updateTable('dsar_requests')
    .set({
      status: 'ready',
      manifest: JSON.stringify(manifest),
      error: null,
      locked_until: null,
      ready_at: times.now,
      expires_at: times.expiresAt,
      updated_at: times.now,
    })
    .where('id', '=', claimed.id)
    .where('attempts', '=', claimed.attempt)
    .where('status', '=', 'running')
    .executeTakeFirst();
  return Number(updated.numUpdatedRows) > 0;
}

/**
 * Ends an attempt that threw: queued again after the queue's backoff, or, after the last attempt,
 * `failed` with its error, and whom it was about forgotten (nothing will be sent).
 */
export async function failDsarRequest(
  database: Kysely<Database>,
  claimed: ClaimedDsarRequest,
  error: unknown,
  now: Date,
): Promise<'retry' | 'failed'> {
  const message = String(error instanceof Error ? error.message : error).slice(0, 1000);
  if (claimed.attempt >= MAX_ATTEMPTS) {
    await database
      .updateTable('dsar_requests')
      .set({
        status: 'failed',
        error: message,
        last_error: message,
        locked_until: null,
        subject_user_id: null,
        subject_email: null,
        updated_at: now,
      })
      .where('id', '=', claimed.id)
      .where('attempts', '=', claimed.attempt)
      .execute();
    return 'failed';
  }
  await database.transaction().execute(async (transaction) => {
    await releaseFailedJob(
      transaction,
      DSAR_REQUESTS,
      { id: claimed.id },
      { retryAt: new Date(now.getTime() + backoffMs(claimed.attempt)), error: message },
    );
    await transaction
      .updateTable('dsar_requests')
      .set({ status: 'queued', updated_at: now })
      .where('id', '=', claimed.id)
      .execute();
  });
  return 'retry';
}

/**
 * Expires every ready request whose archive's time is over: `expired`, whom it was about
 * forgotten, and its manifest reduced to its counts (the lists of sessions and calls emptied).
 * Resolves with how many.
 */
export async function expireDsarRequests(executor: Executor, now: Date): Promise<number> {
  const updated = await executor
    .updateTable('dsar_requests')
    .set({
      status: 'expired',
      subject_user_id: null,
      subject_email: null,
      manifest: sql<string>`jsonb_set(jsonb_set(manifest, '{sessions}', '[]'::jsonb), '{calls}', '[]'::jsonb)`,
      updated_at: now,
    })
    .where('status', '=', 'ready')
    .where('expires_at', '<=', now)
    .executeTakeFirst();
  return Number(updated.numUpdatedRows);
}

/**
 * Ends the lease of every running request, so the next claim takes it at once: for the embedded
 * store at start, where the only process that could hold a lease is one that died.
 */
export async function releaseDsarLeases(database: Kysely<Database>): Promise<void> {
  await database
    .updateTable('dsar_requests')
    .set({ locked_until: null })
    .where('status', '=', 'running')
    .where('locked_until', 'is not', null)
    .execute();
}

/**
 * Up to `limit` errors or custom events (every one, with or without a severity) of a session
 * after the position `after`, in (seq, index) order: the archive's pages of them.
 */
export async function findSessionSignalsAfter(
  executor: Executor,
  place: { projectId: string; sessionId: string; kind: 'error' | 'custom' },
  options: { after?: { seq: number; index: number } | undefined; limit: number },
): Promise<SessionSignal[]> {
  const { after } = options;
  let query = executor
    .selectFrom('session_signals')
    .selectAll()
    .where('project_id', '=', place.projectId)
    .where('session_id', '=', place.sessionId)
    .where('kind', '=', place.kind)
    .orderBy('seq', 'asc')
    .orderBy('event_index', 'asc')
    .limit(options.limit);
  if (after !== undefined)
    query = query.where((where) =>
      where(where.refTuple('seq', 'event_index'), '>', where.tuple(after.seq, after.index)),
    );
  return query.execute();
}
