import { CompiledQuery, type Kysely, sql, type Transaction } from 'kysely';
import { preparedStatement } from '../../platform/database/prepared-statement.ts';
import type { Database } from '../../platform/database/schema.ts';
import { backoffMs, claimStatement, type JobTable, releaseFailedJob } from '../../platform/jobs/queue.ts';
import type { StepInput } from '../../platform/jobs/step-input.ts';
import {
  CALLS_INPUT,
  type CallSessionFacts,
  type CallsInput,
  deleteCallProgress,
  liveCallsStatement,
} from '../calls/index.ts';
import { ISSUES_INPUT, type IssuesInput } from '../issues/index.ts';
import { CUSTOM_EVENTS_INPUT } from '../notifications/index.ts';

// The processing queue: `processing_jobs`, one row per session with something to process after
// ingest (which queues it in the chunk's own statement). A claim also reads what every step of
// its jobs needs, in one statement (servers/api/docs/processing.md).

/** The table of processing jobs, keyed by session. */
const PROCESSING_JOBS: JobTable = { name: 'processing_jobs', key: ['project_id', 'session_id'] };

/** What a job reads before its steps run: the project, the session's facts and each step's input. */
export interface ProcessingInput {
  /** `settings` as JSON text (null: none stored). */
  project: { id: string; organization_id: string; wrapped_data_key: Uint8Array; settings: string | null };
  /** The session's facts (calls copy them; notifications describe the session), if its row exists. */
  session: CallSessionFacts | undefined;
  calls: CallsInput;
  issues: IssuesInput;
  customEvents: { unhandledCustomEvents: boolean };
}

/** A claimed job: the session to process and the generation the worker saw. */
export interface ProcessingJob {
  projectId: string;
  sessionId: string;
  generation: number;
  attempts: number;
  /**
   * What the job reads, read with the claim (`null`: the project is gone). Absent, the job reads
   * it when it runs; a run that lost a race on the session's progress reads it again.
   */
  input?: ProcessingInput | null;
}

/**
 * The job's own part of its input: the project (its columns null when it is gone) and the
 * session's facts. The project's settings come as JSON text: the job parses them once per
 * distinct text, where the database's jsonb output and the driver's parsing cost more.
 */
const JOB_INPUT: StepInput<
  Pick<ProcessingInput, 'session'> & { project: ProcessingInput['project'] | undefined }
> = {
  columns: `
      project.id as found_project_id, project.organization_id, project.wrapped_data_key,
      project.settings::text as settings,
      session.id is not null as has_session, session.browser_name, session.browser_version,
      session.os_name, session.os_version, session.device, session.release, session.environment,
      session.user_id, session.started_at, session.url`,
  joins: `
    left join projects as project on project.id = job.project_id
    left join sessions as session on session.project_id = job.project_id and session.id = job.session_id`,
  read(row) {
    const text = (column: string) => row[column] as string | null;
    return {
      project:
        row.found_project_id === null
          ? undefined
          : {
              id: row.found_project_id as string,
              organization_id: row.organization_id as string,
              wrapped_data_key: row.wrapped_data_key as Uint8Array,
              settings: text('settings'),
            },
      session:
        row.has_session === true && row.started_at !== null
          ? {
              browser_name: text('browser_name'),
              browser_version: text('browser_version'),
              os_name: text('os_name'),
              os_version: text('os_version'),
              device: text('device'),
              release: text('release'),
              environment: text('environment'),
              user_id: text('user_id'),
              started_at: new Date(row.started_at as Date | string),
              url: text('url'),
            }
          : undefined,
    };
  },
};

/** The select list and joins of every step's input over `source` (rows named `job`). */
const inputOver = (source: string) => {
  const parts = [JOB_INPUT, CALLS_INPUT, ISSUES_INPUT, CUSTOM_EVENTS_INPUT];
  return `${parts.map((part) => part.columns).join(',')}
    from ${source}${parts.map((part) => part.joins ?? '').join('')}`;
};

/** A job's input from a row of {@link inputOver}, or undefined when its project is gone. */
function readInput(row: Readonly<Record<string, unknown>>): ProcessingInput | undefined {
  const { project, session } = JOB_INPUT.read(row);
  if (project === undefined) return undefined;
  return {
    project,
    session,
    calls: CALLS_INPUT.read(row),
    issues: ISSUES_INPUT.read(row),
    customEvents: CUSTOM_EVENTS_INPUT.read(row),
  };
}

/** What a job reads, as one prepared statement ($1 the project, $2 the session). */
const LOAD_JOB = `${preparedStatement('svc_load_processing_job')}
    select ${inputOver('(select $1::text as project_id, $2::text as session_id) as job')}`;

/**
 * Claims due jobs and reads what each needs, in one prepared statement ($1 lease seconds, $2
 * limit, $3 coalescing seconds, $4 horizon seconds). One row per claimed job, or one row of nulls
 * but `next_due_in_ms` when none was.
 */
export const CLAIM_AND_LOAD_PROCESSING_JOBS = `${preparedStatement('svc_claim_and_load_processing_jobs')}
  with claimed as (
    ${claimStatement(PROCESSING_JOBS, {
      now: 'now()',
      leaseUntil: 'now() + make_interval(secs => $1::float8)',
      limit: '$2::int',
      ready: 'finished_at is null or finished_at <= now() - make_interval(secs => $3::float8)',
      returning: ['project_id', 'session_id', 'generation', 'attempts'],
    })}
  ),
  upcoming as (
    select extract(epoch from min(greatest(due_at, finished_at + make_interval(secs => $3::float8))) - now())
      * 1000 as next_due_in_ms
    from processing_jobs
    where due_at <= now() + make_interval(secs => $4::float8)
      and (locked_until is null or locked_until <= now())
      and (project_id, session_id) not in (select project_id, session_id from claimed)
  )
  select upcoming.next_due_in_ms, job.project_id as job_project_id, job.session_id as job_session_id,
    job.generation, job.attempts,
    ${inputOver('upcoming left join claimed as job on true')}`;

/**
 * Claims up to `limit` due jobs for `leaseMs` and reads what each needs, in one statement.
 * Concurrent workers, in this process or others on the same PostgreSQL, never claim the same job
 * (`for update skip locked`); a worker that dies loses its jobs when their lease ends. What a job
 * read can be outdated by the time it runs; that is safe, as it is for a job's own read: a chunk
 * that arrives later makes the job due again, and a job writes only over the progress version it
 * read.
 *
 * A job whose previous run finished less than `coalesceMs` ago is left until then, so that the
 * chunks of a session arriving meanwhile are processed together. Also tells when the next job not
 * claimed now becomes claimable (looking `horizonMs` ahead): what a worker sleeps until.
 */
export async function claimProcessingBatch(
  database: Kysely<Database>,
  options: { limit: number; leaseMs: number; coalesceMs: number; horizonMs?: number },
): Promise<{ jobs: ProcessingJob[]; nextDueInMs: number | undefined }> {
  const { rows } = await database.executeQuery<Record<string, unknown>>(
    CompiledQuery.raw(CLAIM_AND_LOAD_PROCESSING_JOBS, [
      options.leaseMs / 1000,
      options.limit,
      options.coalesceMs / 1000,
      (options.horizonMs ?? 0) / 1000,
    ]),
  );
  const next = rows[0]?.next_due_in_ms as number | string | null | undefined;
  return {
    jobs: rows.flatMap((row) =>
      row.job_project_id === null
        ? []
        : [
            {
              projectId: row.job_project_id as string,
              sessionId: row.job_session_id as string,
              generation: row.generation as number,
              attempts: row.attempts as number,
              input: readInput(row) ?? null,
            },
          ],
    ),
    nextDueInMs: next === null || next === undefined ? undefined : Math.max(0, Number(next)),
  };
}

/** {@link claimProcessingBatch} without coalescing, for tests, the CLI and benches: the jobs only. */
export async function claimProcessingJobs(
  database: Kysely<Database>,
  limit: number,
  leaseMs: number,
  options: { coalesceMs?: number } = {},
): Promise<ProcessingJob[]> {
  return (await claimProcessingBatch(database, { limit, leaseMs, coalesceMs: options.coalesceMs ?? 0 })).jobs;
}

/**
 * What a job reads, in one statement (one round trip, where separate queries cost a job most of
 * its time). `undefined` when the project is gone.
 */
export async function loadProcessingInput(
  database: Kysely<Database>,
  projectId: string,
  sessionId: string,
): Promise<ProcessingInput | undefined> {
  const { rows } = await database.executeQuery<Record<string, unknown>>(
    CompiledQuery.raw(LOAD_JOB, [projectId, sessionId]),
  );
  return rows[0] === undefined ? undefined : readInput(rows[0]);
}

/**
 * The live write of the calls step that also ends the job, in one statement: due again at the
 * payload's `dueAt` (a call is still open) unless a chunk arrived meanwhile (its generation moved
 * on: due as it was).
 */
export const WRITE_LIVE_JOB = liveCallsStatement(
  'svc_write_live_processing_job',
  `finished as (
    update processing_jobs as job set locked_until = null, attempts = 0, last_error = null, finished_at = now(),
      due_at = case when job.generation = (input.payload->>'generation')::integer
        then (input.payload->>'dueAt')::timestamptz else job.due_at end
    from input
    where job.project_id = input.payload->>'projectId' and job.session_id = input.payload->>'sessionId'
      and exists (select 1 from saved)
  )`,
);

/**
 * Ends a job that ran: deleted when no chunk arrived meanwhile and every call is closed; due
 * again at `recheckAt` when a call is still open (to close it for inactivity); due at once when
 * a chunk arrived meanwhile (its generation moved on).
 */
export async function finishProcessingJob(
  executor: Kysely<Database> | Transaction<Database>,
  job: ProcessingJob,
  recheckAt: Date | undefined,
): Promise<void> {
  const where = { project_id: job.projectId, session_id: job.sessionId };
  if (recheckAt === undefined) {
    await executor
      .deleteFrom('processing_jobs')
      .where((w) => w.and({ ...where, generation: job.generation }))
      .execute();
  }
  await executor
    .updateTable('processing_jobs')
    .set({
      locked_until: null,
      attempts: 0,
      last_error: null,
      finished_at: sql<Date>`now()`,
      due_at: sql<Date>`case when generation = ${job.generation} then ${recheckAt ?? new Date()}::timestamptz else due_at end`,
    })
    .where((w) => w.and(where))
    .execute();
}

/** Backoff after the n-th failed attempt: 1 s, 2 s, 4 s, ... at most 10 minutes. */
function retryDelayMs(attempts: number): number {
  return backoffMs(attempts, { baseMs: 1_000, maxMs: 600_000 });
}

/** Releases a job whose processing threw; it is due again after {@link retryDelayMs}. */
export async function failProcessingJob(
  database: Kysely<Database>,
  job: ProcessingJob,
  error: unknown,
): Promise<void> {
  await releaseFailedJob(
    database,
    PROCESSING_JOBS,
    { project_id: job.projectId, session_id: job.sessionId },
    { retryAt: new Date(Date.now() + retryDelayMs(job.attempts)), error },
  );
}

/**
 * Queues every session with call data (of one project, or of all) for processing again, due now,
 * and deletes their incremental progress so that each is recomputed from all its items: after a
 * change of detector thresholds, or of this server's processing. Items already read stay in
 * `call_items`, so this recomputes without reading blobs again.
 *
 * @returns how many sessions were queued.
 */
export async function queueReprocessing(database: Kysely<Database>, projectId?: string): Promise<number> {
  return database.transaction().execute(async (transaction) => {
    await deleteCallProgress(transaction, projectId);
    const { rows } = await sql<{ session_id: string }>`
      insert into processing_jobs (project_id, session_id, due_at)
      select distinct project_id, session_id, now() from chunks
      where call_item_count > 0 ${projectId === undefined ? sql`` : sql`and project_id = ${projectId}`}
      order by project_id, session_id
      on conflict (project_id, session_id) do update
        set generation = processing_jobs.generation + 1, due_at = now()
      returning session_id`.execute(transaction);
    return rows.length;
  });
}
