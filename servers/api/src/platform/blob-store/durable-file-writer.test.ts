import { randomBytes } from 'node:crypto';
import { existsSync, statSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createDurableFileWriter, type DurableFileWriter, DurableWriteError } from './durable-file-writer.ts';

let scratch: string;
let writer: DurableFileWriter;

beforeEach(async () => {
  scratch = await mkdtemp(path.join(tmpdir(), 'svc-durable-writer-'));
  writer = createDurableFileWriter({ threads: 2 });
});

afterEach(async () => {
  await writer.close();
  await rm(scratch, { recursive: true, force: true });
});

async function failureOf(promise: Promise<unknown>): Promise<DurableWriteError> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  if (!DurableWriteError.isInstance(error))
    throw new Error(`expected a DurableWriteError, got ${String(error)}`);
  return error;
}

describe('durable file writer', () => {
  it('creates files with their exact bytes and mode 0600, on several threads at once', async () => {
    const files = Array.from({ length: 60 }, (_, index) => ({
      file: path.join(scratch, `f${index}`),
      bytes: new Uint8Array(randomBytes(index * 997)),
    }));
    // One large enough to need several write() calls on some systems.
    files.push({ file: path.join(scratch, 'large'), bytes: new Uint8Array(randomBytes(8 * 1024 * 1024)) });
    await Promise.all(files.map(({ file, bytes }) => writer.write(file, scratch, bytes)));
    for (const { file, bytes } of files) {
      expect(Buffer.compare(await readFile(file), Buffer.from(bytes))).toBe(0);
      if (process.platform !== 'win32') expect(statSync(file).mode & 0o777).toBe(0o600);
    }
  });

  it('refuses a file that exists, and leaves it as it was', async () => {
    const file = path.join(scratch, 'taken');
    await writeFile(file, 'before');
    const error = await failureOf(writer.write(file, scratch, new Uint8Array([1, 2, 3])));
    expect(error).toMatchObject({ stage: 'open', code: 'EEXIST' });
    expect(await readFile(file, 'utf8')).toBe('before');
  });

  it('says ENOENT at open when the directory is missing', async () => {
    const error = await failureOf(
      writer.write(path.join(scratch, 'missing', 'file'), path.join(scratch, 'missing'), new Uint8Array(1)),
    );
    expect(error).toMatchObject({ stage: 'open', code: 'ENOENT' });
  });

  it.runIf(process.platform !== 'win32')(
    'removes the file again when its directory cannot be fsynced',
    async () => {
      const file = path.join(scratch, 'orphan');
      const error = await failureOf(
        writer.write(file, path.join(scratch, 'no-such-directory'), new Uint8Array(4)),
      );
      expect(error).toMatchObject({ stage: 'directory', code: 'ENOENT' });
      expect(existsSync(file)).toBe(false);
    },
  );

  it('fails the writes in flight when it is closed, and every write after', async () => {
    const inFlight = Array.from({ length: 20 }, (_, index) =>
      writer.write(path.join(scratch, `g${index}`), scratch, new Uint8Array(randomBytes(64 * 1024))),
    );
    const settling = Promise.allSettled(inFlight);
    await writer.close();
    const settled = await settling;
    // Some may have finished before the threads stopped; the others fail with stage `thread`.
    for (const result of settled) {
      if (result.status === 'rejected') expect(result.reason).toMatchObject({ stage: 'thread' });
    }
    expect(
      await failureOf(writer.write(path.join(scratch, 'late'), scratch, new Uint8Array(1))),
    ).toMatchObject({
      stage: 'thread',
    });
  });

  it('does not keep the process alive when idle', async () => {
    await writer.write(path.join(scratch, 'idle'), scratch, new Uint8Array(1));
    // An idle thread is unref'd: a child process that writes once and returns exits by itself.
    const { execFileSync } = await import('node:child_process');
    const script = `
      const { createDurableFileWriter } = await import(${JSON.stringify(new URL('./durable-file-writer.ts', import.meta.url).href)});
      const writer = createDurableFileWriter();
      await writer.write(${JSON.stringify(path.join(scratch, 'child'))}, ${JSON.stringify(scratch)}, new Uint8Array([7]));
    `;
    execFileSync(process.execPath, ['--input-type=module', '--eval', script], { timeout: 20_000 });
    expect(await readFile(path.join(scratch, 'child'))).toEqual(Buffer.from([7]));
  });
});
