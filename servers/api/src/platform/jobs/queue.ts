import { type Kysely, sql, type Transaction } from 'kysely';
import type { Database } from '../database/schema.ts';

// The server's durable job queues (processing jobs, webhook deliveries, and the kinds of work
// still to come) are tables with one shape: rows keyed by `key`, due at `due_at`, held by a worker
// until `locked_until` (the lease) and counting their `attempts`. This module is that queue's
// claim and release; src/platform/jobs/polling-loop.ts is the loop a worker runs around them.
//
// Why tables of our own rather than a queue library (pg-boss, graphile-worker): jobs are queued in
// the same transaction as the data they are about (ingest's chunk and its session's job, one
// statement), on PGlite as on PostgreSQL; a claim reads what its jobs need in the same statement
// (the processing job's input), and a job's own writes end it in the same statement. pg-boss and
// graphile-worker run on PostgreSQL only, with their own schema and connections.

/** A job table: its name and the columns that key a job. */
export interface JobTable {
  readonly name: string;
  readonly key: readonly string[];
}

/** The SQL of a claim: expressions (parameters such as `$1`, or `now()`) and what to return. */
export interface ClaimSql {
  /** The time a job must be due by and its lease over by. */
  now: string;
  /** When the claim's lease ends. */
  leaseUntil: string;
  /** How many jobs at most. */
  limit: string;
  /** Another condition a claimable job meets (over the table's columns). */
  ready?: string;
  /** Other assignments the claim makes (`updated_at = now()`). */
  set?: string;
  /** The columns the claim returns. */
  returning: readonly string[];
}

/**
 * The SQL text of a claim of `table`: up to `limit` jobs due by `now` whose lease is over (or that
 * never had one), oldest due first, each leased until `leaseUntil` with its `attempts` counted.
 * Concurrent workers, in this process or others on the same PostgreSQL, never claim the same job:
 * `for update skip locked`. A worker that dies loses its jobs when their lease ends. Usable alone
 * or as a data-modifying CTE of a statement that also reads what the jobs need.
 *
 * @example
 * ```ts
 * claimStatement({ name: 'deliveries', key: ['project_id', 'id'] },
 *   { now: '$1', leaseUntil: '$2', limit: '$3', ready: "status = 'pending'", returning: ['id'] });
 * ```
 */
export function claimStatement(table: JobTable, claim: ClaimSql): string {
  const key = table.key.join(', ');
  return `update ${table.name} set locked_until = ${claim.leaseUntil}, attempts = attempts + 1${
    claim.set === undefined ? '' : `, ${claim.set}`
  }
    where (${key}) in (
      select ${key} from ${table.name}
      where due_at <= ${claim.now} and (locked_until is null or locked_until <= ${claim.now})${
        claim.ready === undefined ? '' : ` and (${claim.ready})`
      }
      order by due_at
      limit ${claim.limit}
      for update skip locked
    )
    returning ${claim.returning.join(', ')}`;
}

/**
 * Exponential backoff after the n-th failed attempt: `baseMs`, twice that, four times, ... at most
 * `maxMs` (defaults: 1 s doubling to 10 minutes).
 */
export function backoffMs(attempts: number, options: { baseMs?: number; maxMs?: number } = {}): number {
  const { baseMs = 1_000, maxMs = 600_000 } = options;
  return Math.min(maxMs, baseMs * 2 ** Math.max(0, attempts - 1));
}

/**
 * Releases a claimed job whose run threw: its lease ends, it is due again at `retryAt`, and its
 * error is kept (`last_error`, the first 1,000 characters) for operators. Never lost.
 */
export async function releaseFailedJob(
  executor: Kysely<Database> | Transaction<Database>,
  table: JobTable,
  key: Readonly<Record<string, string | number>>,
  failure: { retryAt: Date; error: unknown },
): Promise<void> {
  const { error } = failure;
  const where = sql.join(
    table.key.map((column) => {
      const value = key[column];
      if (value === undefined) throw new TypeError(`releaseFailedJob: no value for ${table.name}.${column}`);
      return sql`${sql.ref(column)} = ${value}`;
    }),
    sql` and `,
  );
  await sql`
    update ${sql.table(table.name)}
    set locked_until = null, due_at = ${failure.retryAt},
      last_error = ${String(error instanceof Error ? error.message : error).slice(0, 1000)}
    where ${where}`.execute(executor);
}
