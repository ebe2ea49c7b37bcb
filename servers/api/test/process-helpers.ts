import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CliIo } from '../src/cli.ts';
import { type RunningServer, startServer } from '../src/server.ts';

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

/**
 * Real servers (`startServer`, in this process) for end-to-end tests, quiet and on a free port;
 * `closeAll()` (in `afterEach`) closes the ones still running.
 */
export function createTestServers() {
  const servers: RunningServer[] = [];
  return {
    async start(environment: Record<string, string>): Promise<RunningServer> {
      const server = await startServer(
        { PORT: '0', SVC_LOG_LEVEL: 'silent', ...environment },
        { output: () => {} },
      );
      servers.push(server);
      return server;
    },
    async stop(server: RunningServer): Promise<void> {
      servers.splice(servers.indexOf(server), 1);
      await server.close();
    },
    async closeAll(): Promise<void> {
      for (const server of servers.splice(0)) await server.close();
    },
  };
}
