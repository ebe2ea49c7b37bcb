import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { FastifyBaseLogger } from 'fastify';
import { type Kysely, sql, type Transaction } from 'kysely';
import type { BlobStore } from '../../platform/blob-store/index.ts';
import type { Database } from '../../platform/database/schema.ts';
import type { ErasureRequest } from '../../platform/database/tables/privacy.table.ts';
import { createId } from '../../platform/ids.ts';
import { createPollingLoop, type PollingLoop } from '../../platform/jobs/polling-loop.ts';
import { addRemoved, deleted, deleteSessions, drainBlobDeletions, type Removed } from './delete-sessions.ts';
import { subjectSessions } from './subject.ts';

/** Whose data: the user id given to `identify`, the e-mail address, or both (either matches). */
export interface ErasureSubject {
  userId?: string;
  email?: string;
}

/** Sessions erased per transaction. */
const STEP_SESSIONS = 50;
/** Attempts before a request that keeps failing is marked failed. */
const MAX_ATTEMPTS = 10;

const normalizedEmail = (email: string) => email.trim().toLowerCase();

/** Salt, then SHA-256 of salt and the subject (its user id and lower-cased e-mail). */
function subjectHash(subject: ErasureSubject, salt: Uint8Array = randomBytes(16)): Uint8Array {
  const digest = createHash('sha256')
    .update(salt)
    .update(
      JSON.stringify([
        subject.userId ?? null,
        subject.email === undefined ? null : normalizedEmail(subject.email),
      ]),
    )
    .digest();
  return Buffer.concat([salt, digest]);
}

/**
 * Whether `request` was made for `subject` (same user id and e-mail as given then), without the
 * request keeping either: its hash is salted.
 *
 * @example
 * ```ts
 * if (erasureIsFor(request, { email: 'ada@example.com' })) reply.send(request.receipt);
 * ```
 */
export function erasureIsFor(
  request: Pick<ErasureRequest, 'subject_hash'>,
  subject: ErasureSubject,
): boolean {
  const stored = Buffer.from(request.subject_hash);
  const computed = subjectHash(subject, stored.subarray(0, 16));
  return stored.length === computed.length && timingSafeEqual(stored, computed);
}

/**
 * Queues the erasure of an end user's data across an organization's projects; the privacy worker
 * carries it out ({@link runErasureStep}).
 *
 * @example
 * ```ts
 * const request = await createErasure(transaction, 'org_1', { email: 'ada@example.com' }, 'usr_1');
 * ```
 */
export async function createErasure(
  executor: Kysely<Database> | Transaction<Database>,
  organizationId: string,
  subject: ErasureSubject,
  requestedBy: string | null,
): Promise<ErasureRequest> {
  return executor
    .insertInto('erasure_requests')
    .values({
      id: createId('era'),
      organization_id: organizationId,
      subject_hash: subjectHash(subject),
      user_id: subject.userId ?? null,
      email: subject.email === undefined ? null : normalizedEmail(subject.email),
      user_id_given: subject.userId !== undefined,
      email_given: subject.email !== undefined,
      requested_by: requestedBy,
      receipt: JSON.stringify({}),
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

/**
 * Deletes what mentions the erased sessions or the subject outside the sessions' own rows: inbox
 * notifications and their deliveries (a custom event's or a leak report's envelope names the
 * session) and AI explanations that cite them.
 */
async function deleteMentions(
  transaction: Transaction<Database>,
  projectId: string,
  needles: readonly string[],
): Promise<Removed> {
  if (needles.length === 0) return {};
  const mentions = (column: 'payload' | 'result' | 'input') =>
    sql.join(
      needles.map((needle) => sql`strpos(${sql.ref(column)}::text, ${needle}) > 0`),
      sql` or `,
    );
  const events = (
    await transaction
      .selectFrom('notification_events')
      .select('id')
      .where('project_id', '=', projectId)
      .where(sql<boolean>`(${mentions('payload')})`)
      .execute()
  ).map((row) => row.id);
  const removed: Removed = {};
  if (events.length > 0) {
    const deliveries = (
      await transaction
        .selectFrom('deliveries')
        .select('id')
        .where('project_id', '=', projectId)
        .where('event_id', 'in', events)
        .execute()
    ).map((row) => row.id);
    if (deliveries.length > 0) {
      removed.delivery_attempts = await deleted(
        transaction
          .deleteFrom('delivery_attempts')
          .where('project_id', '=', projectId)
          .where('delivery_id', 'in', deliveries),
      );
      removed.deliveries = await deleted(
        transaction
          .deleteFrom('deliveries')
          .where('project_id', '=', projectId)
          .where('id', 'in', deliveries),
      );
    }
    removed.notification_events = await deleted(
      transaction
        .deleteFrom('notification_events')
        .where('project_id', '=', projectId)
        .where('id', 'in', events),
    );
  }
  removed.ai_jobs = await deleted(
    transaction
      .deleteFrom('ai_jobs')
      .where('project_id', '=', projectId)
      .where(sql<boolean>`(${mentions('result')} or ${mentions('input')})`),
  );
  return removed;
}

/**
 * Ends the organization's access requests (DSAR) for the same person: expired at once, whom they
 * were about forgotten, their lists of sessions and calls emptied (what they listed is erased).
 */
async function forgetAccessRequests(
  transaction: Transaction<Database>,
  organizationId: string,
  subject: { user_id: string | null; email: string | null },
): Promise<Removed> {
  const matches = [
    ...(subject.user_id === null ? [] : [sql<boolean>`subject_user_id = ${subject.user_id}`]),
    ...(subject.email === null ? [] : [sql<boolean>`lower(subject_email) = ${subject.email}`]),
  ];
  if (matches.length === 0) return {};
  const updated = await transaction
    .updateTable('dsar_requests')
    .set({
      status: 'expired',
      subject_user_id: null,
      subject_email: null,
      manifest: sql<string>`case when manifest is null then null
        else jsonb_set(jsonb_set(manifest, '{sessions}', '[]'::jsonb), '{calls}', '[]'::jsonb) end`,
      locked_until: null,
      updated_at: new Date(),
    })
    .where('organization_id', '=', organizationId)
    .where(sql<boolean>`(${sql.join(matches, sql` or `)})`)
    .executeTakeFirst();
  return { dsar_requests: Number(updated.numUpdatedRows) };
}

/**
 * Deletes spans and log records that name the subject without a session id (`enduser.id` or
 * `enduser.email` attributes, a log line with the address): those with the erased sessions' ids
 * went with the sessions. A scan of the project's telemetry, which retention keeps short.
 */
async function deleteTelemetryNaming(
  transaction: Transaction<Database>,
  projectId: string,
  identifiers: readonly string[],
): Promise<Removed> {
  if (identifiers.length === 0) return {};
  const naming = (columns: readonly string[]) =>
    sql.join(
      identifiers.flatMap((identifier) =>
        columns.map(
          (column) => sql`strpos(lower(coalesce(${sql.ref(column)}, '')), ${identifier.toLowerCase()}) > 0`,
        ),
      ),
      sql` or `,
    );
  const spans = await transaction
    .deleteFrom('spans')
    .where('project_id', '=', projectId)
    .where(sql<boolean>`(${naming(['attributes', 'resource_attributes', 'name', 'status_message'])})`)
    .executeTakeFirst();
  const logs = await transaction
    .deleteFrom('log_records')
    .where('project_id', '=', projectId)
    .where(sql<boolean>`(${naming(['attributes', 'body'])})`)
    .executeTakeFirst();
  return { spans: Number(spans.numDeletedRows), log_records: Number(logs.numDeletedRows) };
}

/**
 * Takes the oldest erasure due (queued, or running with its lease expired) and does one step of
 * it, in one transaction: up to {@link STEP_SESSIONS} of the subject's sessions deleted everywhere
 * ({@link deleteSessions}), what mentions them deleted, and the receipt updated; then their blobs
 * are removed (`blobs_removed` in the receipt). A step that finds no session left and no blob of
 * the organization waiting completes the request: what mentions the subject itself goes, the
 * subject is cleared (its salted hash stays), and the request is `completed`.
 * Resolves with whether a step ran. A crash loses at most the step in hand, which rolls back.
 *
 * @example
 * ```ts
 * while (await runErasureStep({ database, blobStore }, new Date()));
 * ```
 */
export async function runErasureStep(
  dependencies: { database: Kysely<Database>; blobStore: BlobStore },
  now: Date,
): Promise<boolean> {
  const { database, blobStore } = dependencies;
  const ran = await database.transaction().execute(async (transaction) => {
    const request = await transaction
      .selectFrom('erasure_requests')
      .selectAll()
      .where('status', 'in', ['queued', 'running'])
      .where((where) => where.or([where('locked_until', 'is', null), where('locked_until', '<', now)]))
      .orderBy('created_at')
      .orderBy('id')
      .limit(1)
      .forUpdate()
      .skipLocked()
      .executeTakeFirst();
    if (request === undefined) return undefined;
    const sessions = (
      await sql<{ project_id: string; id: string }>`
        ${subjectSessions(request.organization_id, { userId: request.user_id, email: request.email })}
        order by 1, 2 limit ${STEP_SESSIONS}`.execute(transaction)
    ).rows;
    const removed: Removed = {};
    const byProject = new Map<string, string[]>();
    for (const session of sessions)
      byProject.set(session.project_id, [...(byProject.get(session.project_id) ?? []), session.id]);
    for (const [projectId, ids] of byProject) {
      addRemoved(removed, await deleteSessions(transaction, projectId, ids, now));
      addRemoved(removed, await deleteMentions(transaction, projectId, ids));
    }
    // Done when a step finds nothing left and no blob of the organization waits for removal.
    const pendingBlobs = await transaction
      .selectFrom('blob_deletions')
      .select('blob_key')
      .where('project_id', 'in', (eb) =>
        eb.selectFrom('projects').select('id').where('organization_id', '=', request.organization_id),
      )
      .limit(1)
      .execute();
    const done = sessions.length === 0 && pendingBlobs.length === 0;
    if (done) {
      const identifiers = [request.user_id, request.email].filter((value): value is string => value !== null);
      const projects = await transaction
        .selectFrom('projects')
        .select('id')
        .where('organization_id', '=', request.organization_id)
        .execute();
      addRemoved(removed, await forgetAccessRequests(transaction, request.organization_id, request));
      for (const project of projects) {
        addRemoved(removed, await deleteMentions(transaction, project.id, identifiers));
        addRemoved(removed, await deleteTelemetryNaming(transaction, project.id, identifiers));
      }
    }
    const receipt = addRemoved({ ...request.receipt }, removed);
    await transaction
      .updateTable('erasure_requests')
      .set({
        receipt: JSON.stringify(receipt),
        sessions_erased: request.sessions_erased + sessions.length,
        status: done ? 'completed' : 'running',
        started_at: request.started_at ?? now,
        locked_until: null,
        ...(done ? { finished_at: now, user_id: null, email: null } : {}),
      })
      .where('id', '=', request.id)
      .execute();
    return { id: request.id, blobs: removed.blobs ?? 0 };
  });
  if (ran === undefined) return false;
  if (ran.blobs > 0) {
    await drainBlobDeletions(database, blobStore);
    await sql`
      update erasure_requests set receipt = jsonb_set(receipt, '{blobs_removed}',
        to_jsonb(coalesce((receipt->>'blobs_removed')::bigint, 0) + ${ran.blobs}))
      where id = ${ran.id}`.execute(database);
  }
  return true;
}

/** Counts a failed step against its request; a request failing {@link MAX_ATTEMPTS} times is failed for good. */
async function recordFailure(database: Kysely<Database>, error: unknown, now: Date): Promise<void> {
  const message = error instanceof Error ? error.message : String(error);
  // The step took the oldest request due: the same one.
  const failed = await database
    .selectFrom('erasure_requests')
    .select(['id', 'attempts'])
    .where('status', 'in', ['queued', 'running'])
    .where((where) => where.or([where('locked_until', 'is', null), where('locked_until', '<', now)]))
    .orderBy('created_at')
    .orderBy('id')
    .limit(1)
    .executeTakeFirst();
  if (failed === undefined) return;
  const givesUp = failed.attempts + 1 >= MAX_ATTEMPTS;
  await database
    .updateTable('erasure_requests')
    .set({
      attempts: failed.attempts + 1,
      error: message.slice(0, 1_000),
      locked_until: givesUp ? null : new Date(now.getTime() + 60_000),
      ...(givesUp ? { status: 'failed' as const, finished_at: now } : {}),
    })
    .where('id', '=', failed.id)
    .execute();
}

/**
 * The erasure worker of a server process: steps through due erasures, then looks again every
 * `pollMs` (or when woken by a new request). Any number of processes may run one.
 *
 * @example
 * ```ts
 * const worker = createErasureWorker({ database, blobStore, log });
 * worker.start();
 * ```
 */
export function createErasureWorker(
  dependencies: {
    database: Kysely<Database>;
    blobStore: BlobStore;
    log: FastifyBaseLogger;
    now?: () => Date;
  },
  options: { pollMs?: number } = {},
): PollingLoop {
  const now = dependencies.now ?? (() => new Date());
  return createPollingLoop(
    async () => {
      const at = now();
      try {
        return (await runErasureStep(dependencies, at)) ? 1 : 0;
      } catch (error) {
        await recordFailure(dependencies.database, error, at);
        throw error;
      }
    },
    {
      pollMs: options.pollMs ?? 10_000,
      onError: (error) => dependencies.log.error({ err: error }, 'an erasure step failed'),
    },
  );
}
