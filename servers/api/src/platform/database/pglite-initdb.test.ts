import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { initializePGliteDirectory } from './pglite-initdb.ts';
import { newPGlite } from './pglite-instance.ts';

let scratch: string;

beforeAll(async () => {
  scratch = await mkdtemp(path.join(tmpdir(), 'svc-initdb-'));
});

afterAll(async () => {
  await rm(scratch, { recursive: true, force: true });
});

describe('initializePGliteDirectory', () => {
  it('creates a database in a child process, renamed into an empty or missing directory', async () => {
    const missing = path.join(scratch, 'a', 'pglite');
    const empty = path.join(scratch, 'b', 'pglite');
    await mkdir(empty, { recursive: true });
    await Promise.all([initializePGliteDirectory(missing), initializePGliteDirectory(empty)]);
    for (const directory of [missing, empty]) {
      expect(existsSync(path.join(directory, 'PG_VERSION'))).toBe(true);
      // No staging directory is left beside it.
      expect(await readdir(path.dirname(directory))).toEqual(['pglite']);
      const pglite = newPGlite(directory);
      const { rows } = await pglite.query<{ answer: number }>('select 41 + 1 as answer');
      expect(rows).toEqual([{ answer: 42 }]);
      await pglite.close();
    }
  }, 120_000);

  it('leaves a directory that holds a database alone', async () => {
    const directory = path.join(scratch, 'a', 'pglite');
    const before = await stat(path.join(directory, 'PG_VERSION'));
    await initializePGliteDirectory(directory);
    expect((await stat(path.join(directory, 'PG_VERSION'))).mtimeMs).toBe(before.mtimeMs);
  });

  it('refuses a directory with other files in it, and cleans up after itself', async () => {
    const directory = path.join(scratch, 'c', 'pglite');
    await mkdir(directory, { recursive: true });
    await writeFile(path.join(directory, 'notes.txt'), 'not a database');
    await expect(initializePGliteDirectory(directory)).rejects.toThrow(/not empty but holds no database/);
    expect(await readdir(path.dirname(directory))).toEqual(['pglite']);
    expect(await readdir(directory)).toEqual(['notes.txt']);
  }, 120_000);
});
