import { CompiledQuery, sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ENGINES, openTestDatabase, type TestDatabase } from '../../../test/test-database.ts';
import { backoffMs, claimStatement, type JobTable, releaseFailedJob } from './queue.ts';

// The queue's claim and release over a job table of their own, on both engines.

const JOBS: JobTable = { name: 'queue_test_jobs', key: ['tenant', 'id'] };

const CLAIM = claimStatement(JOBS, {
  now: 'now()',
  leaseUntil: 'now() + make_interval(secs => $1::float8)',
  limit: '$2::int',
  ready: 'kind <> $3::text',
  returning: ['tenant', 'id', 'attempts'],
});

describe('backoffMs', () => {
  it('doubles from the base up to the cap', () => {
    expect([1, 2, 3, 4].map((attempts) => backoffMs(attempts))).toEqual([1_000, 2_000, 4_000, 8_000]);
    expect(backoffMs(30)).toBe(600_000);
    expect(backoffMs(0, { baseMs: 50 })).toBe(50);
    expect(backoffMs(3, { baseMs: 100, maxMs: 300 })).toBe(300);
  });
});

describe.each(ENGINES)('job queue on %s', (engine) => {
  let handle: TestDatabase;
  const claim = async (limit: number, leaseSeconds = 60, skippedKind = 'none') =>
    (
      await handle.database.executeQuery<{ tenant: string; id: string; attempts: number }>(
        CompiledQuery.raw(CLAIM, [leaseSeconds, limit, skippedKind]),
      )
    ).rows
      .map((row) => `${row.tenant}/${row.id}#${row.attempts}`)
      .sort();

  beforeAll(async () => {
    handle = await openTestDatabase(engine);
    await sql`
      create table queue_test_jobs (
        tenant text not null, id text not null, kind text not null default 'plain',
        due_at timestamptz not null, locked_until timestamptz, attempts integer not null default 0,
        last_error text, primary key (tenant, id))`.execute(handle.database);
  });
  afterAll(async () => {
    await handle?.dispose();
  });

  it('claims due jobs oldest first, leases them, counts attempts, and skips the leased and the not ready', async () => {
    await sql`delete from queue_test_jobs`.execute(handle.database);
    await sql`
      insert into queue_test_jobs (tenant, id, kind, due_at) values
        ('a', '1', 'plain', now() - interval '3 seconds'),
        ('a', '2', 'plain', now() - interval '2 seconds'),
        ('b', '1', 'held', now() - interval '4 seconds'),
        ('b', '2', 'plain', now() + interval '1 hour')`.execute(handle.database);

    expect(await claim(1, 60, 'held')).toEqual(['a/1#1']);
    expect(await claim(10, 60, 'held')).toEqual(['a/2#1']);
    // Leased jobs are not claimed again; a job not due is not claimed; 'held' was kept back.
    expect(await claim(10, 60, 'held')).toEqual([]);
    expect(await claim(10, 60)).toEqual(['b/1#1']);
  });

  it('gives a job whose lease ended to the next claim, its attempt counted again', async () => {
    await sql`delete from queue_test_jobs`.execute(handle.database);
    await sql`insert into queue_test_jobs (tenant, id, due_at) values ('a', '1', now())`.execute(
      handle.database,
    );
    expect(await claim(1, 0)).toEqual(['a/1#1']);
    expect(await claim(1, 0)).toEqual(['a/1#2']);
  });

  it('releases a failed job: due again at the retry time with its error, never lost', async () => {
    await sql`delete from queue_test_jobs`.execute(handle.database);
    await sql`insert into queue_test_jobs (tenant, id, due_at) values ('a', '1', now()), ('a', '2', now())`.execute(
      handle.database,
    );
    expect(await claim(10)).toEqual(['a/1#1', 'a/2#1']);
    const retryAt = new Date(Date.now() - 1_000);
    await releaseFailedJob(
      handle.database,
      JOBS,
      { tenant: 'a', id: '1' },
      { retryAt, error: new Error('x'.repeat(2_000)) },
    );
    const { rows } = await sql<{
      id: string;
      locked_until: Date | null;
      due_at: Date;
      last_error: string | null;
    }>`
      select id, locked_until, due_at, last_error from queue_test_jobs order by id`.execute(handle.database);
    expect(rows[0]).toMatchObject({ id: '1', locked_until: null, last_error: 'x'.repeat(1_000) });
    expect(new Date(rows[0]?.due_at ?? 0).getTime()).toBe(retryAt.getTime());
    expect(rows[1]?.locked_until).not.toBeNull();
    expect(await claim(10)).toEqual(['a/1#2']);
    await expect(
      releaseFailedJob(handle.database, JOBS, { tenant: 'a' }, { retryAt, error: 'no id' }),
    ).rejects.toThrow(/no value for queue_test_jobs.id/);
  });

  // PGlite has one connection: its claims never run at once.
  if (engine === 'postgres')
    it('never gives one job to two concurrent claims', async () => {
      await sql`delete from queue_test_jobs`.execute(handle.database);
      await sql`
      insert into queue_test_jobs (tenant, id, due_at)
      select 't', lpad(n::text, 3, '0'), now() from generate_series(1, 200) as n`.execute(handle.database);
      const claims = await Promise.all(Array.from({ length: 8 }, () => claim(30)));
      const all = claims.flat();
      expect(all).toHaveLength(200);
      expect(new Set(all.map((job) => job.split('#')[0])).size).toBe(200);
    });
});
