import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiClient, type Json } from '../../../test/http.ts';
import { createTestApp, type TestApp } from '../../../test/test-app.ts';
import { ENGINES } from '../../../test/test-database.ts';
import { type AiJobHandlers, createAiJobWorker, queueAiJob } from './index.ts';
import { claimAiJobs, completeAiJob, scheduledJobs } from './jobs.ts';

// AI jobs end to end on both engines: the scheduler of two workers (as of two processes) creating
// each scheduled job once, jobs run by their handlers, a failing handler retried with backoff then
// `failed`, and GET /v1/ai/jobs/{id} in each state, scoped to the caller's project. Every worker
// runs on a clock the test moves: nothing waits for real time.

const MINUTE_MS = 60_000;
const HOUR_MS = 60 * MINUTE_MS;
const DAY_MS = 24 * HOUR_MS;

/** 00:05 UTC of the first Monday after `time`: a new hour, day and week at once. */
function mondayAfter(time: number): number {
  const day = Math.floor(time / DAY_MS);
  // 1970-01-01 was a Thursday: day d is a Monday when (d + 3) % 7 is 0.
  const monday = day + 7 - ((day + 3) % 7);
  return monday * DAY_MS + 5 * MINUTE_MS;
}

describe('scheduledJobs', () => {
  it('asks for the hour, the day and the week (Monday to Monday, UTC) just ended, due 10 minutes after each', () => {
    // Sunday 2026-11-22 23:59: the week that ended is the one before, from Monday 2026-11-09.
    const sunday = scheduledJobs(new Date('2026-11-22T23:59:00Z'));
    expect(sunday.map((job) => [job.kind, job.key('proj_1'), job.input, job.dueAt.toISOString()])).toEqual([
      [
        'anomaly_scan',
        'anomaly:proj_1:2026-11-22T22:00:00.000Z',
        { hour: '2026-11-22T22:00:00.000Z' },
        '2026-11-22T23:10:00.000Z',
      ],
      [
        'digest',
        'digest:daily:proj_1:2026-11-21',
        { period: 'daily', start: '2026-11-21T00:00:00.000Z', end: '2026-11-22T00:00:00.000Z' },
        '2026-11-22T00:10:00.000Z',
      ],
      [
        'digest',
        'digest:weekly:proj_1:2026-11-09',
        { period: 'weekly', start: '2026-11-09T00:00:00.000Z', end: '2026-11-16T00:00:00.000Z' },
        '2026-11-16T00:10:00.000Z',
      ],
    ]);
    // A minute later, Monday: the week of 2026-11-16 has ended.
    const monday = scheduledJobs(new Date('2026-11-23T00:00:00Z'));
    expect(monday.map((job) => job.key('proj_1'))).toEqual([
      'anomaly:proj_1:2026-11-22T23:00:00.000Z',
      'digest:daily:proj_1:2026-11-22',
      'digest:weekly:proj_1:2026-11-16',
    ]);
  });
});

describe.each(ENGINES)('AI jobs on %s', (engine) => {
  let test: TestApp;
  const { request, get } = apiClient(() => test);

  beforeAll(async () => {
    test = await createTestApp(engine);
  });
  afterAll(async () => {
    await test?.close();
  });

  /** A worker on the test's clock with these handlers. */
  const workerOf = (clock: { now: number }, handlers: AiJobHandlers, schedule = true) =>
    createAiJobWorker({
      database: test.database.database,
      handlers,
      log: test.app.log,
      now: () => new Date(clock.now),
      schedule,
    });

  const jobsOf = (projectId: string) =>
    test.database.database
      .selectFrom('ai_jobs')
      .select(['id', 'kind', 'dedupe_key', 'input', 'status', 'due_at'])
      .where('project_id', '=', projectId)
      .orderBy('dedupe_key')
      .execute();

  it('schedules each hour, day and week once across two workers, and runs the jobs when due', async () => {
    const second = await test.createProject('Second');
    const clock = { now: mondayAfter(Date.now()) };
    const ran: string[] = [];
    const handlers: AiJobHandlers = {
      anomaly_scan: async (job) => {
        ran.push(`${job.projectId} ${job.kind} ${JSON.stringify(job.input)}`);
        return { scanned: (job.input as Json).hour };
      },
      digest: async (job, context) => {
        ran.push(`${job.projectId} ${job.kind} ${JSON.stringify(job.input)}`);
        return { period: (job.input as Json).period, at: context.now.toISOString() };
      },
    };
    // Two workers, as in two server processes, ticking at once.
    const [first, other] = [workerOf(clock, handlers), workerOf(clock, handlers)];
    expect(await Promise.all([first.runUntilIdle(), other.runUntilIdle()])).toEqual([0, 0]);

    const monday = new Date(clock.now - 5 * MINUTE_MS);
    const hour = new Date(monday.getTime() - HOUR_MS).toISOString();
    const day = new Date(monday.getTime() - DAY_MS);
    const week = new Date(monday.getTime() - 7 * DAY_MS);
    for (const project of [test.first.project, second.project]) {
      const jobs = await jobsOf(project.id);
      expect(jobs.map((job) => [job.kind, job.dedupe_key, job.input, job.status])).toEqual([
        ['anomaly_scan', `anomaly:${project.id}:${hour}`, { hour }, 'queued'],
        [
          'digest',
          `digest:daily:${project.id}:${day.toISOString().slice(0, 10)}`,
          { period: 'daily', start: day.toISOString(), end: monday.toISOString() },
          'queued',
        ],
        [
          'digest',
          `digest:weekly:${project.id}:${week.toISOString().slice(0, 10)}`,
          { period: 'weekly', start: week.toISOString(), end: monday.toISOString() },
          'queued',
        ],
      ]);
      // Due 10 minutes after their period: late chunks and processing land first.
      for (const job of jobs) expect(new Date(job.due_at).getTime()).toBe(monday.getTime() + 10 * MINUTE_MS);
    }
    const queued = (await jobsOf(test.first.project.id))[0] as Json;
    const shown = await get(`/v1/ai/jobs/${queued.id}`);
    expect(shown).toEqual({
      id: queued.id,
      kind: 'anomaly_scan',
      status: 'queued',
      createdAt: new Date(clock.now).toISOString(),
      attempts: 0,
      dueAt: new Date(monday.getTime() + 10 * MINUTE_MS).toISOString(),
    });

    // Due: the two workers run the six jobs, each once.
    clock.now += 10 * MINUTE_MS;
    const counts = await Promise.all([first.runUntilIdle(), other.runUntilIdle()]);
    expect(counts[0] + counts[1]).toBe(6);
    expect(ran).toHaveLength(6);
    expect(new Set(ran).size).toBe(6);
    const done = await get(`/v1/ai/jobs/${queued.id}`);
    expect(done).toEqual({
      id: queued.id,
      kind: 'anomaly_scan',
      status: 'succeeded',
      createdAt: new Date(clock.now - 10 * MINUTE_MS).toISOString(),
      startedAt: new Date(clock.now).toISOString(),
      finishedAt: new Date(clock.now).toISOString(),
      attempts: 1,
      result: { scanned: hour },
    });

    // The next hour: one more anomaly scan per project, and no second digest of the same day.
    clock.now += HOUR_MS;
    await Promise.all([first.runUntilIdle(), other.runUntilIdle()]);
    for (const project of [test.first.project, second.project]) {
      const jobs = await jobsOf(project.id);
      expect(jobs.map((job) => job.kind)).toEqual(['anomaly_scan', 'anomaly_scan', 'digest', 'digest']);
    }
    expect(await first.runUntilIdle()).toBe(0);
  });

  it('retries a failing handler with backoff, then fails it with its error; a kind without a handler fails clearly', async () => {
    const project = await test.createProject('Failing');
    // A week back: never where the first test's scheduled jobs fall due.
    const clock = { now: Date.now() - 7 * DAY_MS };
    let release: (() => void) | undefined;
    let attempts = 0;
    const worker = workerOf(
      clock,
      {
        explain_session: async () => {
          attempts += 1;
          if (attempts === 1) await new Promise<void>((resolve) => (release = resolve));
          throw new Error(`model unavailable (${attempts})`);
        },
      },
      false,
    );
    const job = await queueAiJob(test.database.database, {
      projectId: project.project.id,
      kind: 'explain_session',
      input: { sessionId: 'ses_01JD2S5V8Q8C4Y3K2W9T7N6M5H' },
      now: new Date(clock.now),
    });
    const url = `/v1/ai/jobs/${job.id}`;

    // Running: the first attempt is in the handler.
    const first = worker.runUntilIdle();
    while (release === undefined) await new Promise((resolve) => setTimeout(resolve, 5));
    expect(await get(url, project)).toMatchObject({
      status: 'running',
      attempts: 1,
      startedAt: new Date(clock.now).toISOString(),
    });
    release();
    expect(await first).toBe(1);

    // Queued for a retry 1 s later (backoff 1 s, 2 s, 4 s, 8 s), the error shown.
    const delays: number[] = [];
    for (let attempt = 1; attempt <= 4; attempt += 1) {
      const shown = await get(url, project);
      expect(shown).toMatchObject({
        status: 'queued',
        attempts: attempt,
        error: `model unavailable (${attempt})`,
      });
      const delay = new Date(shown.dueAt).getTime() - clock.now;
      delays.push(delay);
      // Not due before then.
      clock.now += delay - 1;
      expect(await worker.runUntilIdle()).toBe(0);
      clock.now += 1;
      expect(await worker.runUntilIdle()).toBe(1);
    }
    expect(delays).toEqual([1_000, 2_000, 4_000, 8_000]);
    const failed = await get(url, project);
    expect(failed).toEqual({
      id: job.id,
      kind: 'explain_session',
      status: 'failed',
      createdAt: job.created_at.toISOString(),
      startedAt: new Date(clock.now).toISOString(),
      finishedAt: new Date(clock.now).toISOString(),
      attempts: 5,
      error: 'model unavailable (5)',
    });
    clock.now += HOUR_MS;
    expect(await worker.runUntilIdle()).toBe(0);
    expect(worker.failures()).toBe(5);

    // A kind this process has no handler for: its attempts fail, naming the kind.
    const orphan = await queueAiJob(test.database.database, {
      projectId: project.project.id,
      kind: 'explain_issue',
      input: {},
      maxAttempts: 1,
      now: new Date(clock.now),
    });
    expect(await worker.runUntilIdle()).toBe(1);
    expect(await get(`/v1/ai/jobs/${orphan.id}`, project)).toMatchObject({
      status: 'failed',
      attempts: 1,
      error: 'No handler for AI jobs of kind "explain_issue" in this process',
    });
  });

  it('runs a job again once the lease of a worker that stopped ends; the stopped attempt changes nothing', async () => {
    const project = await test.createProject('Lease');
    const database = test.database.database;
    const clock = { now: Date.now() - 14 * DAY_MS };
    const job = await queueAiJob(database, {
      projectId: project.project.id,
      kind: 'explain_issue',
      input: {},
      now: new Date(clock.now),
    });
    // A worker claims it, for a minute, and stops (no heartbeat, no end).
    const [stopped] = await claimAiJobs(database, {
      now: new Date(clock.now),
      leaseMs: MINUTE_MS,
      limit: 10,
    });
    expect(stopped).toMatchObject({ id: job.id, attempt: 1 });
    const worker = workerOf(clock, { explain_issue: async () => ({ explained: true }) }, false);
    expect(await worker.runUntilIdle()).toBe(0);
    expect(await get(`/v1/ai/jobs/${job.id}`, project)).toMatchObject({ status: 'running', attempts: 1 });
    clock.now += MINUTE_MS;
    expect(await worker.runUntilIdle()).toBe(1);
    // The stopped attempt, ending late, does not overwrite the one that ran.
    if (stopped === undefined) throw new Error('not claimed');
    expect(await completeAiJob(database, stopped, { explained: false }, new Date(clock.now))).toBe(false);
    expect(await get(`/v1/ai/jobs/${job.id}`, project)).toMatchObject({
      status: 'succeeded',
      attempts: 2,
      result: { explained: true },
    });
  });

  it('queues a job once per dedupe key, and shows a job to its project only', async () => {
    const database = test.database.database;
    const input = { hour: '2026-11-17T14:00:00.000Z' };
    const job = await queueAiJob(database, {
      projectId: test.first.project.id,
      kind: 'anomaly_scan',
      input,
      dedupeKey: 'anomaly:test',
    });
    const again = await queueAiJob(database, {
      projectId: test.first.project.id,
      kind: 'anomaly_scan',
      input: { hour: '2026-11-17T15:00:00.000Z' },
      dedupeKey: 'anomaly:test',
    });
    expect(again.id).toBe(job.id);
    expect(again.input).toEqual(input);
    // The same key in another project is another job; jobs without a key are never deduplicated.
    const other = await test.createProject('Other');
    const theirs = await queueAiJob(database, {
      projectId: other.project.id,
      kind: 'anomaly_scan',
      input,
      dedupeKey: 'anomaly:test',
    });
    expect(theirs.id).not.toBe(job.id);
    const plain = [1, 2].map(() =>
      queueAiJob(database, { projectId: other.project.id, kind: 'explain_issue', input: {} }),
    );
    const [one, two] = await Promise.all(plain);
    expect(one?.id).not.toBe(two?.id);

    expect((await get(`/v1/ai/jobs/${job.id}`)).id).toBe(job.id);
    const foreign = await request('GET', `/v1/ai/jobs/${job.id}`, undefined, other);
    expect(foreign.statusCode).toBe(404);
    expect(foreign.json()).toEqual({ error: `No AI job ${job.id}`, code: 'not_found' });
    const malformed = await request('GET', '/v1/ai/jobs/ses_01JD2S5V8Q8C4Y3K2W9T7N6M5H');
    expect(malformed.statusCode).toBe(400);
  });
});
