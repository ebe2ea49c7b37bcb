import { CompiledQuery, type Kysely, sql, type Transaction } from 'kysely';
import { z } from 'zod';
import type { Database } from '../../platform/database/schema.ts';
import type { AiJob, AiJobKind, AiJobStatus } from '../../platform/database/tables/ai-jobs.table.ts';
import { createId } from '../../platform/ids.ts';
import { backoffMs, claimStatement, type JobTable, releaseFailedJob } from '../../platform/jobs/queue.ts';

// AI jobs (servers/api/README.md, AI jobs, anomalies and digests): the scheduled and long work of
// issue 24 — anomaly scans, digests, and the explanations to come — as rows of `ai_jobs` that any
// server process claims with src/platform/jobs/queue.ts (skip-locked claim, lease, backoff).
//
// Why this table queue rather than pg-boss: the reasons of queue.ts hold here too. A job is
// queued in the caller's transaction (an explanation asked for by a request, with the request's
// writes), on PGlite as on PostgreSQL; pg-boss needs PostgreSQL (its own schema, its own
// connections, LISTEN/NOTIFY, advisory locks) and would be a second queue to run and to watch
// beside the one processing and webhook deliveries already use. What pg-boss would add here —
// cron-like schedules and singleton keys — is one unique key (`dedupe_key`) and one statement an
// hour (`scheduleAiJobs`).

type Executor = Kysely<Database> | Transaction<Database>;

/** The kinds of AI jobs: the scheduled reports, and the explanations another part will queue. */
const AI_JOB_KINDS = [
  'anomaly_scan',
  'digest',
  'explain_session',
  'explain_issue',
] as const satisfies readonly AiJobKind[];

/** What a handler may resolve with: a job's `result`, kept as JSON. */
export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };

/** Attempts of a job before it is `failed` (unless it was queued with another number). */
const DEFAULT_MAX_ATTEMPTS = 5;

/** How long after its period a scheduled job is due, so late chunks and processing land first. */
const SCHEDULE_SETTLE_MS = 10 * 60 * 1000;

/** Finished jobs are deleted this long after they finished (the scheduler's hourly sweep). */
const FINISHED_JOB_RETENTION_MS = 30 * 24 * 3600 * 1000;

const HOUR_MS = 3600 * 1000;
const DAY_MS = 24 * HOUR_MS;
const WEEK_MS = 7 * DAY_MS;

/** The queue of queue.ts: `ai_jobs`, keyed by project and id. */
const AI_JOBS: JobTable = { name: 'ai_jobs', key: ['project_id', 'id'] };

const isoInstant = z.iso.datetime().transform((value) => new Date(value));

/**
 * The input of an `anomaly_scan` job: the start of the UTC hour it scans (ISO 8601).
 *
 * @example
 * ```ts
 * anomalyScanInputSchema.parse({ hour: '2026-11-17T14:00:00.000Z' }).hour; // a Date
 * ```
 */
export const anomalyScanInputSchema = z.object({ hour: isoInstant });

/**
 * The input of a `digest` job: its period (`daily`, `weekly`) and `[start, end)` in UTC.
 *
 * @example
 * ```ts
 * digestInputSchema.parse({ period: 'daily', start: '2026-11-17T00:00:00.000Z', end: '2026-11-18T00:00:00.000Z' });
 * ```
 */
export const digestInputSchema = z.object({
  period: z.enum(['daily', 'weekly']),
  start: isoInstant,
  end: isoInstant,
});

/** A job to queue. */
export interface NewAiJob {
  projectId: string;
  kind: AiJobKind;
  input: Record<string, JsonValue>;
  /** Creates the job once per project and key: queueing it again returns the job already there. */
  dedupeKey?: string | undefined;
  /** When it may run (default now). */
  dueAt?: Date | undefined;
  maxAttempts?: number | undefined;
  /** The time it is queued at (default now): the scheduler's clock. */
  now?: Date | undefined;
}

/** JSON as both engines return it: parsed by the driver, or text. */
function parseJson(value: unknown): unknown {
  return typeof value === 'string' ? (JSON.parse(value) as unknown) : value;
}

/**
 * Queues a job, in the caller's transaction when given one, and returns it; with a `dedupeKey`
 * already used by a job of the project, returns that job instead (whatever its status), so a
 * scheduler running in N processes creates each scheduled job once.
 *
 * @example
 * ```ts
 * const job = await queueAiJob(transaction, { projectId, kind: 'explain_session', input: { sessionId } });
 * ```
 */
export async function queueAiJob(executor: Executor, job: NewAiJob): Promise<AiJob> {
  const now = job.now ?? new Date();
  const inserted = await executor
    .insertInto('ai_jobs')
    .values({
      project_id: job.projectId,
      id: createId('job'),
      kind: job.kind,
      dedupe_key: job.dedupeKey ?? null,
      input: JSON.stringify(job.input),
      due_at: job.dueAt ?? now,
      max_attempts: job.maxAttempts ?? DEFAULT_MAX_ATTEMPTS,
      created_at: now,
      started_at: null,
      finished_at: null,
      locked_until: null,
      last_error: null,
      error: null,
    })
    .onConflict((conflict) => conflict.columns(['project_id', 'dedupe_key']).doNothing())
    .returningAll()
    .executeTakeFirst();
  if (inserted !== undefined) return inserted;
  // Only a dedupe key conflicts (ids are new): the job of the key is committed (the conflict
  // waited for the transaction that inserted it), so this statement sees it.
  if (job.dedupeKey === undefined) throw new Error('queueAiJob: a job without a dedupe key was not inserted');
  return executor
    .selectFrom('ai_jobs')
    .selectAll()
    .where('project_id', '=', job.projectId)
    .where('dedupe_key', '=', job.dedupeKey)
    .executeTakeFirstOrThrow();
}

/**
 * The project's job `id`, or undefined (another project's job too).
 *
 * @example
 * ```ts
 * const job = await findAiJob(database, projectId, 'job_01JD2S5V8Q8C4Y3K2W9T7N6M5H');
 * ```
 */
export async function findAiJob(
  database: Executor,
  projectId: string,
  id: string,
): Promise<AiJob | undefined> {
  return database
    .selectFrom('ai_jobs')
    .selectAll()
    .where('project_id', '=', projectId)
    .where('id', '=', id)
    .executeTakeFirst();
}

/** A job a worker holds for one attempt. */
export interface ClaimedAiJob {
  projectId: string;
  id: string;
  kind: AiJobKind;
  input: unknown;
  /** This attempt's number (the claim counts it). */
  attempt: number;
  maxAttempts: number;
  /** The previous attempt's error, if one failed. */
  lastError: string | null;
}

/** The claim of due jobs ($1 now, $2 the lease's end, $3 the limit). */
const CLAIM_AI_JOBS = claimStatement(AI_JOBS, {
  now: '$1::timestamptz',
  leaseUntil: '$2::timestamptz',
  limit: '$3::int',
  ready: "status in ('queued', 'running')",
  set: "status = 'running', started_at = $1::timestamptz",
  returning: ['project_id', 'id', 'kind', 'input', 'attempts', 'max_attempts', 'last_error'],
});

/**
 * Claims up to `limit` due jobs (queued, or running with their lease over: their worker died),
 * each `running` and leased until `now + leaseMs`, its attempt counted. Concurrent workers, here
 * or in other processes on one PostgreSQL, never claim the same job (`for update skip locked`).
 *
 * @example
 * ```ts
 * const jobs = await claimAiJobs(database, { now: new Date(), leaseMs: 600_000, limit: 4 });
 * ```
 */
export async function claimAiJobs(
  database: Kysely<Database>,
  options: { now: Date; leaseMs: number; limit: number },
): Promise<ClaimedAiJob[]> {
  const { rows } = await database.executeQuery<{
    project_id: string;
    id: string;
    kind: AiJobKind;
    input: unknown;
    attempts: number;
    max_attempts: number;
    last_error: string | null;
  }>(
    CompiledQuery.raw(CLAIM_AI_JOBS, [
      options.now,
      new Date(options.now.getTime() + options.leaseMs),
      Math.max(1, Math.floor(options.limit)),
    ]),
  );
  return rows.map((row) => ({
    projectId: row.project_id,
    id: row.id,
    kind: row.kind,
    input: parseJson(row.input),
    attempt: row.attempts,
    maxAttempts: row.max_attempts,
    lastError: row.last_error,
  }));
}

/** The conditions of a job still held by the attempt that claimed it. */
function heldBy(job: ClaimedAiJob) {
  return { projectId: job.projectId, id: job.id, attempt: job.attempt };
}

/**
 * Ends a job whose attempt succeeded: `succeeded`, its result kept. Only while the attempt still
 * holds it (its `attempts` unchanged: a worker whose lease ran out and whose job another worker
 * took changes nothing). Resolves with whether it did.
 */
export async function completeAiJob(
  database: Executor,
  job: ClaimedAiJob,
  result: JsonValue,
  now: Date,
): Promise<boolean> {
  const { projectId, id, attempt } = heldBy(job);
  const updated = await database
    .updateTable('ai_jobs')
    .set({
      status: 'succeeded',
      result: JSON.stringify(result),
      error: null,
      locked_until: null,
      finished_at: now,
    })
    .where('project_id', '=', projectId)
    .where('id', '=', id)
    .where('attempts', '=', attempt)
    .where('status', '=', 'running')
    .executeTakeFirst();
  return Number(updated.numUpdatedRows) > 0;
}

/**
 * Ends an attempt that threw. Before the job's last attempt it is `queued` again, due after the
 * queue's backoff (1 s doubling to 10 minutes, `backoffMs`) with its error in `last_error`
 * (`releaseFailedJob`); after it, the job is `failed` with the error kept in `error`. Resolves
 * with what became of it.
 */
export async function failAiJob(
  database: Kysely<Database>,
  job: ClaimedAiJob,
  error: unknown,
  now: Date,
): Promise<'retry' | 'failed'> {
  const message = String(error instanceof Error ? error.message : error).slice(0, 1000);
  const { projectId, id, attempt } = heldBy(job);
  if (attempt >= job.maxAttempts) {
    await database
      .updateTable('ai_jobs')
      .set({ status: 'failed', error: message, last_error: message, locked_until: null, finished_at: now })
      .where('project_id', '=', projectId)
      .where('id', '=', id)
      .where('attempts', '=', attempt)
      .execute();
    return 'failed';
  }
  await database.transaction().execute(async (transaction) => {
    await releaseFailedJob(
      transaction,
      AI_JOBS,
      { project_id: projectId, id },
      { retryAt: new Date(now.getTime() + backoffMs(attempt)), error: message },
    );
    await transaction
      .updateTable('ai_jobs')
      .set({ status: 'queued' })
      .where('project_id', '=', projectId)
      .where('id', '=', id)
      .execute();
  });
  return 'retry';
}

/**
 * Ends the lease of every running job, so the next claim takes it at once: for the embedded store
 * at start, where the only process that could hold a lease is one that died.
 */
export async function releaseAiJobLeases(database: Kysely<Database>): Promise<void> {
  await database
    .updateTable('ai_jobs')
    .set({ locked_until: null })
    .where('status', '=', 'running')
    .where('locked_until', 'is not', null)
    .execute();
}

/** The start of the UTC hour of `time`. */
export function hourStart(time: Date): Date {
  return new Date(Math.floor(time.getTime() / HOUR_MS) * HOUR_MS);
}

/** The start of the UTC day of `time`. */
function dayStart(time: Date): Date {
  return new Date(Math.floor(time.getTime() / DAY_MS) * DAY_MS);
}

/** The start of the UTC week (Monday 00:00) of `time`. */
function weekStart(time: Date): Date {
  const day = Math.floor(time.getTime() / DAY_MS);
  // 1970-01-01 was a Thursday: day 0 is 3 days after a Monday.
  return new Date((day - ((day + 3) % 7)) * DAY_MS);
}

/** A job the schedule asks for, for every project. */
interface ScheduledJob {
  kind: AiJobKind;
  /** The key, without the project: `anomaly:<hour>`, `digest:daily:<day>`, `digest:weekly:<monday>`. */
  key: (projectId: string) => string;
  input: Record<string, JsonValue>;
  /** The end of the period it is about: projects created after it get none. */
  periodEnd: Date;
  dueAt: Date;
}

/**
 * The jobs the schedule wants at `now`: the anomaly scan of the UTC hour just ended, the daily
 * digest of the UTC day just ended and the weekly digest of the week (Monday to Monday, UTC)
 * just ended, each due {@link SCHEDULE_SETTLE_MS} after its period.
 *
 * @example
 * ```ts
 * scheduledJobs(new Date('2026-11-17T14:05:00Z')).map((job) => job.key('proj_1'));
 * // ['anomaly:proj_1:2026-11-17T13:00:00.000Z', 'digest:daily:proj_1:2026-11-16', 'digest:weekly:proj_1:2026-11-09']
 * ```
 */
export function scheduledJobs(now: Date): ScheduledJob[] {
  const hourEnd = hourStart(now);
  const hour = new Date(hourEnd.getTime() - HOUR_MS);
  const dayEnd = dayStart(now);
  const day = new Date(dayEnd.getTime() - DAY_MS);
  const weekEnd = weekStart(now);
  const week = new Date(weekEnd.getTime() - WEEK_MS);
  const date = (time: Date) => time.toISOString().slice(0, 10);
  const settled = (end: Date) => new Date(end.getTime() + SCHEDULE_SETTLE_MS);
  return [
    {
      kind: 'anomaly_scan',
      key: (projectId) => `anomaly:${projectId}:${hour.toISOString()}`,
      input: { hour: hour.toISOString() },
      periodEnd: hourEnd,
      dueAt: settled(hourEnd),
    },
    {
      kind: 'digest',
      key: (projectId) => `digest:daily:${projectId}:${date(day)}`,
      input: { period: 'daily', start: day.toISOString(), end: dayEnd.toISOString() },
      periodEnd: dayEnd,
      dueAt: settled(dayEnd),
    },
    {
      kind: 'digest',
      key: (projectId) => `digest:weekly:${projectId}:${date(week)}`,
      input: { period: 'weekly', start: week.toISOString(), end: weekEnd.toISOString() },
      periodEnd: weekEnd,
      dueAt: settled(weekEnd),
    },
  ];
}

/** Rows of one scheduling insert at most. */
const SCHEDULE_BATCH = 500;

/**
 * The scheduler's tick: queues {@link scheduledJobs} at `now` for every project that is not
 * deleted and existed before the period ended (one multi-row insert per batch of projects, each
 * job `on conflict do nothing` on its dedupe key: any number of processes may tick at once, each
 * job is created once), and deletes jobs finished more than 30 days ago. Resolves with how many
 * jobs it created.
 *
 * @example
 * ```ts
 * await scheduleAiJobs(database, new Date()); // e.g. 3 for one project at the start of a week
 * ```
 */
export async function scheduleAiJobs(database: Kysely<Database>, now: Date): Promise<number> {
  const projects = await database
    .selectFrom('projects')
    .select(['id', 'created_at'])
    .where('deleted_at', 'is', null)
    .orderBy('id')
    .execute();
  const rows = scheduledJobs(now).flatMap((job) =>
    projects
      .filter((project) => new Date(project.created_at).getTime() < job.periodEnd.getTime())
      .map((project) => ({
        project_id: project.id,
        id: createId('job'),
        kind: job.kind,
        dedupe_key: job.key(project.id),
        input: JSON.stringify(job.input),
        due_at: job.dueAt,
        max_attempts: DEFAULT_MAX_ATTEMPTS,
        created_at: now,
      })),
  );
  let created = 0;
  for (let index = 0; index < rows.length; index += SCHEDULE_BATCH) {
    const inserted = await database
      .insertInto('ai_jobs')
      .values(rows.slice(index, index + SCHEDULE_BATCH))
      .onConflict((conflict) => conflict.columns(['project_id', 'dedupe_key']).doNothing())
      .returning('id')
      .execute();
    created += inserted.length;
  }
  await sql`
    delete from ai_jobs
    where finished_at < ${new Date(now.getTime() - FINISHED_JOB_RETENTION_MS)}`.execute(database);
  return created;
}

/** A job as `GET /v1/ai/jobs/{id}` shows it. */
export const aiJobSchema = z.object({
  id: z.string(),
  kind: z.enum(AI_JOB_KINDS),
  status: z.enum(['queued', 'running', 'succeeded', 'failed'] as const satisfies readonly AiJobStatus[]),
  createdAt: z.iso.datetime(),
  /** When its latest attempt started. */
  startedAt: z.iso.datetime().optional(),
  finishedAt: z.iso.datetime().optional(),
  /** Attempts made (or being made). */
  attempts: z.int(),
  /** Why it failed (`failed`), or why its last attempt did (`queued` for a retry). */
  error: z.string().optional(),
  /** When it is due (`queued`): its next attempt's time after a failure. */
  dueAt: z.iso.datetime().optional(),
  /** What it produced (`succeeded`). */
  result: z.unknown().optional(),
});

/** A job row as {@link aiJobSchema} shows it. */
export function toAiJobView(row: AiJob): z.infer<typeof aiJobSchema> {
  const time = (value: Date | null) => (value === null ? undefined : new Date(value).toISOString());
  const error = row.error ?? (row.status === 'succeeded' ? null : row.last_error);
  return {
    id: row.id,
    kind: row.kind,
    status: row.status,
    createdAt: new Date(row.created_at).toISOString(),
    startedAt: time(row.started_at),
    finishedAt: time(row.finished_at),
    attempts: row.attempts,
    error: error ?? undefined,
    dueAt: row.status === 'queued' ? time(row.due_at) : undefined,
    result: row.status === 'succeeded' ? parseJson(row.result) : undefined,
  };
}
