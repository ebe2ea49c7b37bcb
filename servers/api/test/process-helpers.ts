import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CliIo } from '../src/cli.ts';

/** CLI output captured as text, for `runCli`. */
export function captureIo(): CliIo & { out: string; err: string } {
  const io = {
    out: '',
    err: '',
    stdout(text: string) {
      io.out += text;
    },
    stderr(text: string) {
      io.err += text;
    },
  };
  return io;
}

/** Temporary data directories, each made on request and all removed by `removeAll()` (in `afterEach`). */
export function createScratchDirectories(prefix: string) {
  const made: string[] = [];
  return {
    async make(): Promise<string> {
      const directory = await mkdtemp(join(tmpdir(), prefix));
      made.push(directory);
      return directory;
    },
    async removeAll(): Promise<void> {
      for (const directory of made.splice(0)) await rm(directory, { recursive: true, force: true });
    },
  };
}
