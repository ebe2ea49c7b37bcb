import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { CliIo } from '../src/cli.ts';
import { type RunningServer, startServer } from '../src/server.ts';
import type { Json } from './http.ts';

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

const serverPath = fileURLToPath(new URL('../src/server.ts', import.meta.url));

/** A server running as its own process (so a test can SIGKILL it). */
export interface SpawnedServer {
  child: ChildProcess;
  url: string;
  output: () => string;
}

/**
 * Starts `src/server.ts` as its own process with `environment` (plus PATH, 127.0.0.1, a free
 * port and `warn` logs), and resolves once it listens.
 */
export async function spawnServer(environment: Record<string, string>): Promise<SpawnedServer> {
  const child = spawn(process.execPath, ['--conditions=@svc/source', serverPath], {
    env: {
      PATH: process.env.PATH,
      HOST: '127.0.0.1',
      PORT: '0',
      SVC_LOG_LEVEL: 'warn',
      ...environment,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout?.setEncoding('utf8').on('data', (text: string) => {
    output += text;
  });
  child.stderr?.setEncoding('utf8').on('data', (text: string) => {
    output += text;
  });
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`server did not start:\n${output}`)), 60_000);
    const onData = () => {
      const match = /listening on (http:\/\/\S+)/.exec(output);
      if (match !== null) {
        clearTimeout(timer);
        resolve(match[1] as string);
      }
    };
    child.stdout?.on('data', onData);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`server exited with ${code} before listening:\n${output}`));
    });
  });
  return { child, url, output: () => output };
}

/** SIGKILLs a spawned server (no shutdown of any kind) and waits for it to be gone. */
export async function kill(server: SpawnedServer): Promise<void> {
  if (server.child.exitCode !== null || server.child.signalCode !== null) return;
  const exited = once(server.child, 'exit');
  server.child.kill('SIGKILL');
  await exited;
}

/**
 * A JSON request over fetch to a running server with an API token (http.ts has the `app.inject`
 * ones); throws (with the answer) on a status of 300 or more. Resolves with the parsed body as
 * `Body`, or undefined for an empty one (204).
 */
export async function apiRequest<Body = Json>(
  url: string,
  token: string,
  method: string,
  body?: unknown,
): Promise<Body> {
  const response = await fetch(url, {
    method,
    headers: {
      authorization: `Bearer ${token}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  if (response.status >= 300) throw new Error(`${method} ${url}: ${response.status} ${text}`);
  return (text === '' ? undefined : JSON.parse(text)) as Body;
}
