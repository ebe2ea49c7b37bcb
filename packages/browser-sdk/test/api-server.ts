import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type RunningServer, startServer } from '@svc/api/src/server.ts';

// The real server (servers/api on its embedded store, in the test process) for the SDK's tests.

/** A fresh data directory, removed by `remove`. */
export async function dataDirectory(): Promise<{ path: string; remove(): Promise<void> }> {
  const path = await mkdtemp(join(tmpdir(), 'svc-sdk-'));
  return { path, remove: () => rm(path, { recursive: true, force: true }) };
}

/** The server on `directory` (a fresh one creates the first project), on `port` (0: any). */
export async function startApi(directory: string, port = '0'): Promise<RunningServer> {
  return startServer(
    { PORT: port, HOST: '127.0.0.1', SVC_DATA_DIR: directory, SVC_LOG_LEVEL: 'silent' },
    { output: () => {} },
  );
}

/** The first project's credentials (a fresh data directory has them). */
export function credentialsOf(server: RunningServer): { projectKey: string; apiToken: string } {
  if (server.credentials === null) throw new Error('expected first-start credentials');
  return server.credentials;
}

/** Polls `check` every 200 ms until it holds, or fails after `timeoutMs`. */
export async function until(check: () => boolean | Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('timed out waiting');
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}
