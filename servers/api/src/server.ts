import { fileURLToPath } from 'node:url';
import type { FastifyInstance } from 'fastify';
import { buildApp } from './app.ts';
import { type AddedPerson, addPerson, DEFAULT_OWNER_EMAIL } from './modules/orgs/index.ts';
import { ensureFirstProject, formatWelcome, type ProjectCredentials } from './modules/projects/bootstrap.ts';
import { openServices } from './open-services.ts';
import { ConfigurationError, describeConfiguration, loadConfiguration } from './platform/config.ts';
import { DataDirectoryLockedError } from './platform/data-directory-lock.ts';

/** The first start's lines about the owner account: who, and the one-time sign-in link. */
function formatOwnerWelcome(owner: AddedPerson, baseUrl: string): string {
  const token =
    owner.signInLink === undefined ? undefined : new URL(owner.signInLink).searchParams.get('token');
  return [
    `Created the owner account ${owner.email} of ${owner.organization.name} (${owner.organization.id}).`,
    'Sign in once with this link, within an hour (it works one time):',
    `  ${owner.signInLink}`,
    `  or: curl -si ${baseUrl}/auth/magic-link -H 'content-type: application/json' -d '{"token":"${token}"}'`,
    `To set a password: svc reset-password --email ${owner.email}`,
    '',
  ].join('\n');
}

/** A running server. */
export interface RunningServer {
  fastify: FastifyInstance;
  /** Where it listens, e.g. http://127.0.0.1:8080. */
  url: string;
  /** The first project's credentials on the embedded store (null otherwise). */
  credentials: ProjectCredentials | null;
  /** The owner account the first start created, with its sign-in link (null otherwise). */
  owner: AddedPerson | null;
  /** Stops accepting requests, finishes the ones in flight, then closes the stores. */
  close(): Promise<void>;
}

/**
 * Starts the server from environment variables: validates the settings, opens and migrates the
 * stores, on the embedded store creates the first project, and listens.
 *
 * @example
 * ```ts
 * const server = await startServer({ PORT: '0', SVC_DATA_DIR: './data' });
 * ```
 */
export async function startServer(
  environment: Record<string, string | undefined> = process.env,
  options: { output?: (text: string) => void } = {},
): Promise<RunningServer> {
  const output = options.output ?? ((text: string) => process.stdout.write(text));
  const configuration = loadConfiguration(environment);
  const services = await openServices(configuration);
  let fastify: FastifyInstance;
  try {
    fastify = await buildApp(services);
  } catch (error) {
    await services.close();
    throw error;
  }
  fastify.log.info(
    {
      configuration: describeConfiguration(configuration),
      masterKeyId: services.masterKey.id,
      ...(services.masterKey.previous.length === 0
        ? {}
        : { previousMasterKeyIds: services.masterKey.previous.map((key) => key.id) }),
    },
    'starting',
  );

  let first: Awaited<ReturnType<typeof ensureFirstProject>> = null;
  let owner: AddedPerson | undefined;
  try {
    if (services.database.engine === 'pglite') {
      first = await ensureFirstProject(
        services.database.database,
        services.masterKey,
        configuration.dataDirectory,
      );
      if (first?.created === true) {
        const added = await addPerson(services.database.database, configuration.appUrl, {
          email: configuration.ownerEmail ?? DEFAULT_OWNER_EMAIL,
          organizationId: first.credentials.orgId,
          role: 'owner',
          actor: 'first start',
        });
        if ('problem' in added) fastify.log.warn({ problem: added.problem }, 'no owner account created');
        else owner = added;
      }
      await services.database.flush();
    }
    await fastify.listen({ host: configuration.host, port: configuration.port });
  } catch (error) {
    await fastify.close();
    await services.close();
    throw error;
  }

  const address = fastify.server.address();
  const port = typeof address === 'object' && address !== null ? address.port : configuration.port;
  const host = configuration.host.includes(':') ? `[${configuration.host}]` : configuration.host;
  const url = `http://${host}:${port}`;
  if (first !== null) output(`${formatWelcome(first.credentials, url, first.created)}\n`);
  if (owner !== undefined) output(`${formatOwnerWelcome(owner, url)}\n`);
  output(`listening on ${url}\n`);

  let closing: Promise<void> | undefined;
  return {
    fastify,
    url,
    credentials: first?.credentials ?? null,
    owner: owner ?? null,
    close() {
      closing ??= (async () => {
        await fastify.close();
        await services.close();
      })();
      return closing;
    },
  };
}

async function main(): Promise<void> {
  let server: RunningServer;
  try {
    server = await startServer();
  } catch (error) {
    if (ConfigurationError.isInstance(error) || DataDirectoryLockedError.isInstance(error)) {
      process.stderr.write(`${error.message}\n`);
      process.exit(1);
    }
    throw error;
  }
  const shutdown = (signal: string) => {
    server.fastify.log.info({ signal }, 'shutting down: finishing requests in flight');
    server.close().then(
      () => process.exit(0),
      (error: unknown) => {
        server.fastify.log.error({ err: error }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.once('SIGTERM', () => shutdown('SIGTERM'));
  process.once('SIGINT', () => shutdown('SIGINT'));
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) await main();
