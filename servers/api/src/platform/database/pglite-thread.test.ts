import { cp, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { isUniqueViolation } from './errors.ts';
import { type PGliteThread, startPGliteThread } from './pglite-thread.ts';
import { preparedStatement } from './prepared-statement.ts';

let scratch: string;
let thread: PGliteThread;

beforeAll(async () => {
  scratch = await mkdtemp(path.join(tmpdir(), 'svc-pglite-thread-'));
  const directory = path.join(scratch, 'pglite');
  await cp(inject('pgliteTemplateDirectory'), directory, { recursive: true });
  thread = await startPGliteThread(directory);
});

afterAll(async () => {
  await thread?.close();
  await rm(scratch, { recursive: true, force: true });
});

describe('startPGliteThread', () => {
  it('runs statements on its thread and returns rows with the JavaScript types of the in-process driver', async () => {
    const at = new Date('2026-11-24T10:00:00.123Z');
    const { rows } = await thread.executor.executeQuery<Record<string, unknown>>(
      `select $1::int + 1 as value, $2::bigint as big, $3::timestamptz as at, $4::bytea as bytes,
         $5::jsonb as document, null::text as nothing`,
      [41, 2 ** 40, at, new Uint8Array([0, 255]), JSON.stringify({ a: [1, 'b'] })],
    );
    expect(rows).toEqual([
      {
        value: 42,
        big: 2 ** 40,
        at,
        bytes: new Uint8Array([0, 255]),
        document: { a: [1, 'b'] },
        nothing: null,
      },
    ]);
    expect(rows[0]?.at).toBeInstanceOf(Date);
    expect(rows[0]?.bytes).toBeInstanceOf(Uint8Array);
  });

  it('counts affected rows, and runs prepared statements by name', async () => {
    await thread.executor.executeQuery('create table thread_test (id int primary key, name text)', []);
    const insert = `${preparedStatement('svc_thread_test_insert')}\ninsert into thread_test values ($1, $2), ($1 + 1, $2)`;
    const inserted = await thread.executor.executeQuery(insert, [1, 'one']);
    expect(inserted.numAffectedRows).toBe(2n);
    await thread.executor.executeQuery(insert, [10, 'ten']);
    const { rows } = await thread.executor.executeQuery<{ n: number }>(
      'select count(*)::int as n from thread_test',
      [],
    );
    expect(rows).toEqual([{ n: 4 }]);
  });

  it('hands back database errors with their SQLSTATE and details, and stays usable', async () => {
    const error = await thread.executor
      .executeQuery('insert into thread_test values (1, $1)', ['again'])
      .catch((caught: unknown) => caught);
    expect(isUniqueViolation(error)).toBe(true);
    expect(error).toBeInstanceOf(Error);
    expect((error as Error).message).toMatch(/duplicate key value violates unique constraint/);
    expect((error as { constraint?: string }).constraint).toBe('thread_test_pkey');
    const syntax = await thread.executor.executeQuery('selec 1', []).catch((caught: unknown) => caught);
    expect((syntax as { code?: string }).code).toBe('42601');
    const { rows } = await thread.executor.executeQuery<{ one: number }>('select 1 as one', []);
    expect(rows).toEqual([{ one: 1 }]);
  });

  it('runs statements in the order they were sent', async () => {
    await thread.executor.executeQuery('create table thread_order (position int)', []);
    await Promise.all(
      Array.from({ length: 50 }, (_, index) =>
        thread.executor.executeQuery('insert into thread_order values ($1)', [index]),
      ),
    );
    const { rows } = await thread.executor.executeQuery<{ position: number }>(
      'select position from thread_order',
      [],
    );
    expect(rows.map((row) => row.position)).toEqual(Array.from({ length: 50 }, (_, index) => index));
  });

  it('leaves the event loop free while a statement runs', async () => {
    let ticks = 0;
    const timer = setInterval(() => {
      ticks += 1;
    }, 20);
    try {
      await thread.executor.executeQuery('select pg_sleep(0.5)', []);
    } finally {
      clearInterval(timer);
    }
    // In this thread PGlite would block the loop for the whole 500 ms: no tick at all.
    expect(ticks).toBeGreaterThanOrEqual(10);
  });

  it('refuses statements once closed; closing twice is harmless', async () => {
    const directory = path.join(scratch, 'closing');
    await cp(inject('pgliteTemplateDirectory'), directory, { recursive: true });
    const closing = await startPGliteThread(directory);
    await closing.close();
    await closing.close();
    await expect(closing.executor.executeQuery('select 1', [])).rejects.toThrow(/closed/);
  });

  it('rejects when the database cannot be opened', async () => {
    const file = path.join(scratch, 'not-a-directory');
    await writeFile(file, 'x');
    await expect(startPGliteThread(file)).rejects.toThrow();
  });
});
