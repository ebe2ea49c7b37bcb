import type { KeyObject } from 'node:crypto';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import type { Transaction } from 'kysely';
import { resetPassword } from './modules/accounts/index.ts';
import { checkLicenseFile, deploymentLicense, storeLicense } from './modules/billing/license-store.ts';
import { notifySecurityEvent } from './modules/notifications/index.ts';
import {
  addPerson,
  BREAK_GLASS_ROLES,
  type BreakGlassGrant,
  grantBreakGlass,
  MAX_BREAK_GLASS_HOURS,
  ownerAddresses,
} from './modules/orgs/index.ts';
import { ROLES } from './modules/orgs/roles.ts';
import { createProcessingWorker, queueReprocessing } from './modules/processing/index.ts';
import { createApiTokenRecord } from './modules/projects/api-tokens.ts';
import { createProjectWithToken } from './modules/projects/bootstrap.ts';
import {
  findProjectById,
  PROJECT_KEY_GRACE_HOURS,
  rewrapDataKeys,
  rotateProjectKey,
} from './modules/projects/projects.ts';
import { createSymbolicator } from './modules/sourcemaps/index.ts';
import { type OpenedServices, openServices } from './open-services.ts';
import { type Configuration, ConfigurationError, loadConfiguration } from './platform/config.ts';
import {
  EncryptionError,
  finishMasterKeyRotation,
  MASTER_KEY_FILE_NAME,
  rotateMasterKeyFile,
} from './platform/crypto/index.ts';
import { DataDirectoryLockedError } from './platform/data-directory-lock.ts';
import { migrateToLatest } from './platform/database/migrate.ts';
import type { Database } from './platform/database/schema.ts';
import { createLineLogger } from './platform/line-logger.ts';
import { composeMessage, createMailer } from './platform/mail/index.ts';

const USAGE = `Usage: svc <command> [options]

Commands:
  migrate                                  bring the database schema up to date
  create-project --name <name> [--json]    create a project (and an organization if there is none),
                                           its project key and an API token
  create-token --project <id> [--name <name>] [--json]
                                           create another API token for a project
  rotate-key --project <id> [--json]       give a project a new project key; the old one keeps
                                           working for ${PROJECT_KEY_GRACE_HOURS} hours
  rotate-master-key [--json]               replace the key file's master key with a new one and
                                           re-wrap every project's data key (stored data stays
                                           as it is); with SVC_MASTER_KEY, see rewrap-data-keys
  rewrap-data-keys [--json]                re-wrap every data key under the current master key,
                                           unwrapping with SVC_MASTER_KEY_PREVIOUS (or the key file
                                           a rotation kept); finishes a rotation
  create-user --email <address> [--name <name>] [--org <id>] [--role <role>] [--password <p>] [--json]
                                           create a person's account (verified) as a member of an
                                           organization (default: the first one) with a role
                                           (owner, admin, member, viewer; default owner); without
                                           --password, prints a one-time sign-in link (1 hour)
  reset-password --email <address> [--password <p>] [--json]
                                           set a person's password (and end their sessions), or
                                           without --password print a one-time link to set one
                                           (1 hour)
  break-glass --org <id> --email <address> --reason <why> [--hours <n>] [--role <role>] [--json]
                                           give an operator temporary access to an organization's
                                           data (default 1 hour, at most ${MAX_BREAK_GLASS_HOURS}; role viewer,
                                           member or admin, default viewer): audited, and announced
                                           to the organization (security.break_glass) and mailed to
                                           its owners; an operator without an account gets one and
                                           a one-time sign-in link
  reprocess-calls [--project <id>] [--json]
                                           recompute every call (of one project) from its stored
                                           items, with the current detector thresholds
  license install <file> [--json]          verify a license file and make it the deployment's
                                           license (a forged or expired one is refused)
  license show [--json]                    the deployment's license: plan, limits, dates, warnings

Settings come from the same environment variables as the server (SVC_DATA_DIR, DATABASE_URL,
SVC_MASTER_KEY, SVC_MASTER_KEY_PREVIOUS, S3_*). On the embedded store, stop the server first: one
process at a time.`;

const usageErrorMarker = Symbol.for('@svc/api.UsageError');

/**
 * A mistake in how the CLI was called: printed with the usage, exit code 2.
 *
 * @example
 * ```ts
 * throw new UsageError({ message: '--name is required' });
 * ```
 */
export class UsageError extends Error {
  /** Marks instances for {@link UsageError.isInstance}, across copies of the module. */
  readonly [usageErrorMarker] = true;

  constructor({ message, cause }: { message: string; cause?: unknown }) {
    super(message, cause === undefined ? undefined : { cause });
    this.name = 'UsageError';
  }

  /** Whether `value` is a UsageError (also one made by another copy of this module). */
  static isInstance(value: unknown): value is UsageError {
    return (
      typeof value === 'object' &&
      value !== null &&
      (value as { [usageErrorMarker]?: unknown })[usageErrorMarker] === true
    );
  }
}

/** What tests may replace; the CLI itself always runs with the defaults. */
export interface CliOptions {
  /** The key licenses are verified with (default: the one the server ships with). */
  licensePublicKey?: KeyObject;
}

export interface CliIo {
  stdout(text: string): void;
  stderr(text: string): void;
}

const processIo: CliIo = {
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
};

async function withServices<Result>(
  configuration: Configuration,
  work: (services: OpenedServices) => Promise<Result>,
  options: { migrate?: boolean } = {},
): Promise<Result> {
  const services = await openServices(configuration, options);
  try {
    return await work(services);
  } finally {
    await services.close();
  }
}

/** The break-glass grant's `security.break_glass`, to each project of the organization, in its transaction. */
async function announceBreakGlass(
  transaction: Transaction<Database>,
  grant: BreakGlassGrant,
  appUrl: string,
): Promise<void> {
  const projects = await transaction
    .selectFrom('projects')
    .select(['id', 'organization_id'])
    .where('organization_id', '=', grant.organization.id)
    .where('deleted_at', 'is', null)
    .execute();
  for (const project of projects)
    await notifySecurityEvent(transaction, project, breakGlassEvent(grant, appUrl), new Date());
}

function breakGlassEvent(grant: BreakGlassGrant, appUrl: string) {
  return {
    type: 'security.break_glass' as const,
    data: {
      title: `Break-glass access to ${grant.organization.name}`,
      summary: `An operator gave ${grant.email} ${grant.role} access to the organization's data until ${grant.expiresAt} (${grant.grantedBy}). Reason: ${grant.reason}`,
      severity: 'high' as const,
      counts: { hours: Math.round((Date.parse(grant.expiresAt) - Date.now()) / 3_600_000) },
      links: { members: `${appUrl}/orgs/${grant.organization.id}/members` },
    },
  };
}

/** Tells the organization's owners of break-glass access by e-mail (SMTP, or `.eml` files). */
async function mailOwners(services: OpenedServices, configuration: Configuration, grant: BreakGlassGrant) {
  const mailer = createMailer({
    ...(configuration.smtpUrl === undefined ? {} : { smtpUrl: configuration.smtpUrl }),
    ...(configuration.mailFrom === undefined ? {} : { from: configuration.mailFrom }),
    appUrl: configuration.appUrl,
    dataDirectory: configuration.dataDirectory,
    log: { info() {} },
  });
  try {
    const event = breakGlassEvent(grant, configuration.appUrl);
    for (const owner of await ownerAddresses(services.database.database, grant.organization.id)) {
      await mailer.send({
        to: owner,
        ...composeMessage({
          subject: event.data.title,
          paragraphs: [event.data.summary, 'Every action is in the audit trail. The access ends by itself.'],
          action: { label: 'See the members', url: event.data.links.members },
          footer: `You get this as an owner of ${grant.organization.name}.`,
        }),
      });
    }
  } finally {
    mailer.close();
  }
}

function requireOption(values: Record<string, unknown>, name: string): string {
  const value = values[name];
  if (typeof value !== 'string' || value.trim() === '')
    throw new UsageError({ message: `--${name} is required` });
  return value.trim();
}

/**
 * Runs one CLI command; returns the process exit code (0 ok, 1 failure, 2 usage).
 *
 * @example
 * ```ts
 * const code = await runCli(['create-project', '--name', 'Web app', '--json'], process.env);
 * ```
 */
export async function runCli(
  argv: string[],
  environment: Record<string, string | undefined>,
  io: CliIo = processIo,
  options: CliOptions = {},
): Promise<number> {
  const [command, ...rest] = argv;
  try {
    if (command === undefined || command === 'help' || command === '--help' || command === '-h') {
      io.stdout(`${USAGE}\n`);
      return command === undefined ? 2 : 0;
    }
    const { values, positionals } = parseArgs({
      args: rest,
      options: {
        name: { type: 'string' },
        project: { type: 'string' },
        email: { type: 'string' },
        org: { type: 'string' },
        role: { type: 'string' },
        password: { type: 'string' },
        reason: { type: 'string' },
        hours: { type: 'string' },
        json: { type: 'boolean', default: false },
      },
      strict: true,
      allowPositionals: true,
    });
    // Only `license` takes words after the command (`install <file>`, `show`).
    if (command !== 'license' && positionals.length > 0)
      throw new UsageError({ message: `Unexpected argument "${positionals[0]}"` });
    const configuration = loadConfiguration(environment);

    switch (command) {
      case 'migrate': {
        // Open without the automatic migration, so the command can report what it applied.
        const applied = await withServices(
          configuration,
          (services) => migrateToLatest(services.database.database),
          {
            migrate: false,
          },
        );
        io.stdout(
          applied.length === 0 ? 'The database schema is up to date.\n' : `Applied ${applied.join(', ')}\n`,
        );
        return 0;
      }
      case 'create-project': {
        const name = requireOption(values, 'name');
        if (name.length > 200) throw new UsageError({ message: '--name must be at most 200 characters' });
        const credentials = await withServices(configuration, (services) =>
          createProjectWithToken(services.database.database, services.masterKey, { name }),
        );
        io.stdout(
          values.json
            ? `${JSON.stringify({ orgId: credentials.orgId, projectId: credentials.projectId, projectKey: credentials.projectKey, apiToken: credentials.apiToken })}\n`
            : `Created project ${credentials.projectId} in ${credentials.orgId}\n  project key  ${credentials.projectKey}\n  API token    ${credentials.apiToken}   (shown once)\n`,
        );
        return 0;
      }
      case 'create-token': {
        const projectId = requireOption(values, 'project');
        const tokenName =
          typeof values.name === 'string' && values.name.trim() !== '' ? values.name.trim() : 'cli';
        const created = await withServices(configuration, async (services) => {
          const project = await findProjectById(services.database.database, projectId);
          // A deleted project's tokens would never work: no new ones.
          if (project === undefined || project.deleted_at !== null) return null;
          return createApiTokenRecord(services.database.database, { projectId, name: tokenName });
        });
        if (created === null) {
          io.stderr(`No project ${projectId}\n`);
          return 1;
        }
        io.stdout(
          values.json
            ? `${JSON.stringify({ projectId, tokenId: created.id, apiToken: created.token })}\n`
            : `Created API token ${created.id} for ${projectId}\n  API token  ${created.token}   (shown once)\n`,
        );
        return 0;
      }
      case 'create-user': {
        const email = requireOption(values, 'email');
        const role = (values.role ?? 'owner') as string;
        if (!(ROLES as readonly string[]).includes(role))
          throw new UsageError({ message: `--role must be one of ${ROLES.join(', ')}` });
        const added = await withServices(configuration, (services) =>
          addPerson(services.database.database, configuration.appUrl, {
            email,
            name: typeof values.name === 'string' ? values.name.trim() || undefined : undefined,
            password: values.password,
            organizationId: values.org,
            role: role as (typeof ROLES)[number],
            actor: 'svc create-user',
          }),
        );
        if ('problem' in added) {
          io.stderr(`${added.problem}\n`);
          return 1;
        }
        io.stdout(
          values.json
            ? `${JSON.stringify(added)}\n`
            : [
                `Created ${added.email} (${added.userId}), ${added.role} of ${added.organization.name} (${added.organization.id})`,
                ...(added.signInLink === undefined
                  ? []
                  : [`  sign in once, within an hour, with: ${added.signInLink}`]),
                '',
              ].join('\n'),
        );
        return 0;
      }
      case 'break-glass': {
        const organizationId = requireOption(values, 'org');
        const email = requireOption(values, 'email');
        const reason = requireOption(values, 'reason');
        const hours = values.hours === undefined ? 1 : Number(values.hours);
        const role = (values.role ?? 'viewer') as string;
        if (!(BREAK_GLASS_ROLES as readonly string[]).includes(role))
          throw new UsageError({ message: `--role must be one of ${BREAK_GLASS_ROLES.join(', ')}` });
        const granted = await withServices(configuration, async (services) => {
          const grant = await grantBreakGlass(
            services.database.database,
            configuration.appUrl,
            {
              organizationId,
              email,
              reason,
              hours,
              role: role as (typeof BREAK_GLASS_ROLES)[number],
              grantedBy: 'svc break-glass',
            },
            (transaction, grant) => announceBreakGlass(transaction, grant, configuration.appUrl),
          );
          if (!('problem' in grant)) await mailOwners(services, configuration, grant);
          return grant;
        });
        if ('problem' in granted) {
          io.stderr(`${granted.problem}\n`);
          return 1;
        }
        io.stdout(
          values.json
            ? `${JSON.stringify(granted)}\n`
            : [
                `Granted ${granted.email} ${granted.role} access to ${granted.organization.name} (${granted.organization.id}) until ${granted.expiresAt}; audited and announced to its owners`,
                ...(granted.signInLink === undefined
                  ? []
                  : [`  sign in once, within an hour, with: ${granted.signInLink}`]),
                '',
              ].join('\n'),
        );
        return 0;
      }
      case 'reset-password': {
        const email = requireOption(values, 'email');
        const reset = await withServices(configuration, (services) =>
          resetPassword(services.database.database, configuration.appUrl, {
            email,
            password: values.password,
          }),
        );
        if ('problem' in reset) {
          io.stderr(`${reset.problem}\n`);
          return 1;
        }
        io.stdout(
          values.json
            ? `${JSON.stringify({ userId: reset.user.id, email: reset.user.email, ...(reset.link === undefined ? { sessionsEnded: true } : { resetLink: reset.link }) })}\n`
            : reset.link === undefined
              ? `Set the password of ${reset.user.email}; every session of the account has ended.\n`
              : `Set a new password for ${reset.user.email} with this link, once, within an hour:\n  ${reset.link}\n`,
        );
        return 0;
      }
      case 'rotate-key': {
        const projectId = requireOption(values, 'project');
        const rotated = await withServices(configuration, (services) =>
          rotateProjectKey(services.database.database, projectId),
        );
        if (rotated === undefined) {
          io.stderr(`No project ${projectId}\n`);
          return 1;
        }
        const expiresAt = rotated.previous_project_key_expires_at?.toISOString();
        io.stdout(
          values.json
            ? `${JSON.stringify({ projectId, projectKey: rotated.project_key, previousKeyExpiresAt: expiresAt })}\n`
            : `New project key for ${projectId}: ${rotated.project_key}\n  the previous key works until ${expiresAt}\n`,
        );
        return 0;
      }
      case 'rotate-master-key': {
        if (configuration.masterKey !== undefined) {
          io.stderr(
            [
              'The master key comes from SVC_MASTER_KEY, so rotate it there, on every server process:',
              '  1. generate a new key: openssl rand -base64 32',
              '  2. restart every process with SVC_MASTER_KEY=<new key> and SVC_MASTER_KEY_PREVIOUS=<old key>',
              '  3. run: svc rewrap-data-keys (with the same two settings)',
              '  4. restart every process without SVC_MASTER_KEY_PREVIOUS',
              '',
            ].join('\n'),
          );
          return 1;
        }
        const rotated = await withServices(configuration, async (services) => {
          const master = await rotateMasterKeyFile(configuration.dataDirectory);
          const result = await rewrapDataKeys(services.database.database, master);
          await finishMasterKeyRotation(configuration.dataDirectory);
          return { previousKeyId: services.masterKey.id, masterKeyId: master.id, ...result };
        });
        io.stdout(
          values.json
            ? `${JSON.stringify(rotated)}\n`
            : `Rotated the master key ${rotated.previousKeyId} -> ${rotated.masterKeyId}; re-wrapped the data keys of ${rotated.rewrapped} project(s).\nBack up the new ${join(configuration.dataDirectory, MASTER_KEY_FILE_NAME)}: the old key no longer opens anything.\n`,
        );
        return 0;
      }
      case 'rewrap-data-keys': {
        const done = await withServices(configuration, async (services) => {
          const result = await rewrapDataKeys(services.database.database, services.masterKey);
          const finished =
            configuration.masterKey === undefined &&
            (await finishMasterKeyRotation(configuration.dataDirectory));
          return {
            masterKeyId: services.masterKey.id,
            ...result,
            previousKeyIds: services.masterKey.previous.map((key) => key.id),
            removedPreviousKeyFile: finished,
          };
        });
        const advice =
          configuration.previousMasterKeys !== undefined
            ? 'Every data key is wrapped by the current master key: SVC_MASTER_KEY_PREVIOUS can be removed.\n'
            : done.removedPreviousKeyFile
              ? 'The rotation is finished: the previous key file was removed.\n'
              : '';
        io.stdout(
          values.json
            ? `${JSON.stringify(done)}\n`
            : `Re-wrapped the data keys of ${done.rewrapped} project(s) under master key ${done.masterKeyId}; ${done.current} already were.\n${advice}`,
        );
        return 0;
      }
      case 'reprocess-calls': {
        const projectId = typeof values.project === 'string' ? values.project.trim() : undefined;
        const done = await withServices(configuration, async (services) => {
          if (
            projectId !== undefined &&
            (await findProjectById(services.database.database, projectId)) === undefined
          )
            throw new UsageError({ message: `No project ${projectId}` });
          const queued = await queueReprocessing(services.database.database, projectId);
          const worker = createProcessingWorker({
            database: services.database.database,
            blobStore: services.blobStore,
            symbolicator: createSymbolicator({
              database: services.database.database,
              blobStore: services.blobStore,
            }),
            masterKey: services.masterKey,
            log: createLineLogger((line) => io.stderr(`${line}\n`)),
            appUrl: configuration.appUrl,
          });
          const processed = await worker.runUntilIdle();
          const { failures } = worker.stats();
          await services.database.flush();
          return { queued, processed, failures };
        });
        io.stdout(
          values.json
            ? `${JSON.stringify(done)}\n`
            : `Queued ${done.queued} session(s) with calls; processed ${done.processed} job(s), ${done.failures} failed (kept queued with their error in processing_jobs.last_error).\n`,
        );
        return done.failures === 0 ? 0 : 1;
      }
      case 'license': {
        const [action, file, ...extra] = positionals;
        if (extra.length > 0) throw new UsageError({ message: `Unexpected argument "${extra[0]}"` });
        const publicKey =
          options.licensePublicKey === undefined ? {} : { publicKey: options.licensePublicKey };
        if (action === 'install') {
          if (file === undefined || file.trim() === '')
            throw new UsageError({
              message: 'license install needs the license file: svc license install <file>',
            });
          // Checked before the store is opened: a bad file changes nothing and waits for nothing.
          const result = await checkLicenseFile(file, publicKey);
          if (!result.ok) {
            io.stderr(`${result.problem}\n`);
            return 1;
          }
          await withServices(configuration, (services) =>
            storeLicense(services.database.database, result, 'svc license install'),
          );
          const { license } = result;
          io.stdout(
            values.json
              ? `${JSON.stringify({ licenseId: license.id, organization: license.organization, plan: license.plan, issuedAt: license.issuedAt, expiresAt: license.expiresAt, limits: result.standing.limits })}\n`
              : `Installed license ${license.id} for ${license.organization}: the ${license.plan} plan until ${license.expiresAt}.\n`,
          );
          return 0;
        }
        if (action === 'show' && file === undefined) {
          const standing = await withServices(configuration, (services) =>
            deploymentLicense(services.database.database, publicKey),
          );
          io.stdout(
            values.json
              ? `${JSON.stringify(standing)}\n`
              : [
                  standing.license === undefined
                    ? `No valid license (${standing.status}): the ${standing.plan} plan.`
                    : `License ${standing.license.id} for ${standing.license.organization} (${standing.status}): the ${standing.plan} plan; expires ${standing.license.expiresAt}.`,
                  ...(standing.warning === undefined ? [] : [`Warning: ${standing.warning}`]),
                  '',
                ].join('\n'),
          );
          return 0;
        }
        throw new UsageError({ message: 'license takes install <file> or show' });
      }
      default:
        throw new UsageError({ message: `Unknown command "${command}"` });
    }
  } catch (error) {
    if (
      UsageError.isInstance(error) ||
      (error instanceof TypeError && 'code' in error && String(error.code).startsWith('ERR_PARSE_ARGS'))
    ) {
      io.stderr(`${error.message}\n\n${USAGE}\n`);
      return 2;
    }
    if (
      ConfigurationError.isInstance(error) ||
      DataDirectoryLockedError.isInstance(error) ||
      EncryptionError.isInstance(error)
    ) {
      io.stderr(`${error.message}\n`);
      return 1;
    }
    throw error;
  }
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  process.exitCode = await runCli(process.argv.slice(2), process.env);
}
