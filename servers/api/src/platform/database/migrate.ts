import type { Kysely } from 'kysely';
import { type Migration, type MigrationResultSet, Migrator } from 'kysely/migration';
import * as initial from './migrations/2026-11-22-initial.ts';
import * as sessionSearch from './migrations/2026-11-22-session-search.ts';
import * as deferredChunkSession from './migrations/2026-11-23-deferred-chunk-session.ts';
import * as sessionsFillfactor from './migrations/2026-11-23-sessions-fillfactor.ts';
import * as chunkSessionInCode from './migrations/2026-11-24-chunk-session-in-code.ts';
import * as sessionUserSeq from './migrations/2026-11-24-session-user-seq.ts';
import * as calls from './migrations/2026-11-25-calls.ts';
import * as callsFilterIndexes from './migrations/2026-11-25-calls-filter-indexes.ts';
import * as issuesNotifications from './migrations/2026-11-26-issues-notifications.ts';
import * as customSignals from './migrations/2026-11-27-custom-signals.ts';
import * as incrementalCalls from './migrations/2026-11-28-incremental-calls.ts';
import * as callJobCost from './migrations/2026-11-29-call-job-cost.ts';
import * as processingJobs from './migrations/2026-11-30-processing-jobs.ts';
import * as accounts from './migrations/2026-12-01-accounts.ts';
import * as passwordReset from './migrations/2026-12-02-password-reset.ts';
import * as mfa from './migrations/2026-12-03-mfa.ts';
import * as magicLinks from './migrations/2026-12-04-magic-links.ts';
import * as organizations from './migrations/2026-12-05-organizations.ts';
import * as insights from './migrations/2026-12-06-insights.ts';
import * as funnelIndexes from './migrations/2026-12-07-funnel-indexes.ts';
import * as insightAlerts from './migrations/2026-12-07-insight-alerts.ts';
import * as insightIndexes from './migrations/2026-12-08-insight-indexes.ts';
import * as sourcemaps from './migrations/2026-12-10-sourcemaps.ts';
import * as traces from './migrations/2026-12-11-traces.ts';
import * as assets from './migrations/2026-12-12-assets.ts';
import * as clusterFingerprints from './migrations/2026-12-13-cluster-fingerprints.ts';
import * as aiJobs from './migrations/2026-12-14-ai-jobs.ts';
import * as aiReports from './migrations/2026-12-14-ai-reports.ts';
import * as aiSettings from './migrations/2026-12-15-ai-settings.ts';
import * as search from './migrations/2026-12-16-search.ts';
import * as billing from './migrations/2026-12-17-billing.ts';
import * as usage from './migrations/2026-12-18-usage.ts';
import * as leakRadar from './migrations/2026-12-19-leak-radar.ts';
import * as usageReports from './migrations/2026-12-19-usage-reports.ts';
import * as breakGlass from './migrations/2026-12-20-break-glass.ts';
import * as privacy from './migrations/2026-12-21-privacy.ts';
import * as dsar from './migrations/2026-12-22-dsar.ts';
import * as sso from './migrations/2026-12-23-sso.ts';
import * as passkeys from './migrations/2026-12-24-passkeys.ts';
import * as oauth from './migrations/2026-12-25-oauth.ts';
import * as ssoFlows from './migrations/2026-12-26-sso-flows.ts';
import * as saml from './migrations/2026-12-27-saml.ts';

/**
 * Every migration, by name, in order. Imported statically (not read from a folder at run time)
 * so the list is the same however the server is packaged. Names are date-prefixed.
 */
export const MIGRATIONS: Readonly<Record<string, Migration>> = {
  '2026-11-22-initial': initial,
  '2026-11-22-session-search': sessionSearch,
  '2026-11-23-deferred-chunk-session': deferredChunkSession,
  '2026-11-23-sessions-fillfactor': sessionsFillfactor,
  '2026-11-24-chunk-session-in-code': chunkSessionInCode,
  '2026-11-24-session-user-seq': sessionUserSeq,
  '2026-11-25-calls': calls,
  '2026-11-25-calls-filter-indexes': callsFilterIndexes,
  '2026-11-26-issues-notifications': issuesNotifications,
  '2026-11-27-custom-signals': customSignals,
  '2026-11-28-incremental-calls': incrementalCalls,
  '2026-11-29-call-job-cost': callJobCost,
  '2026-11-30-processing-jobs': processingJobs,
  '2026-12-01-accounts': accounts,
  '2026-12-02-password-reset': passwordReset,
  '2026-12-03-mfa': mfa,
  '2026-12-04-magic-links': magicLinks,
  '2026-12-05-organizations': organizations,
  '2026-12-06-insights': insights,
  '2026-12-07-funnel-indexes': funnelIndexes,
  '2026-12-07-insight-alerts': insightAlerts,
  '2026-12-08-insight-indexes': insightIndexes,
  '2026-12-10-sourcemaps': sourcemaps,
  '2026-12-11-traces': traces,
  '2026-12-12-assets': assets,
  '2026-12-13-cluster-fingerprints': clusterFingerprints,
  '2026-12-14-ai-jobs': aiJobs,
  '2026-12-14-ai-reports': aiReports,
  '2026-12-15-ai-settings': aiSettings,
  '2026-12-16-search': search,
  '2026-12-17-billing': billing,
  '2026-12-18-usage': usage,
  '2026-12-19-leak-radar': leakRadar,
  '2026-12-19-usage-reports': usageReports,
  '2026-12-20-break-glass': breakGlass,
  '2026-12-21-privacy': privacy,
  '2026-12-22-dsar': dsar,
  '2026-12-23-sso': sso,
  '2026-12-24-passkeys': passkeys,
  '2026-12-25-oauth': oauth,
  '2026-12-26-sso-flows': ssoFlows,
  '2026-12-27-saml': saml,
};

/**
 * Brings the schema up to date. Safe to run from several processes at once: kysely takes a
 * lock (a Postgres advisory lock) around the migration run.
 *
 * @example
 * ```ts
 * const applied = await migrateToLatest(database);
 * ```
 */
// biome-ignore lint/suspicious/noExplicitAny: the migrator works on any schema, like the migrations
export async function migrateToLatest(database: Kysely<any>): Promise<string[]> {
  const migrator = new Migrator({
    db: database,
    provider: { getMigrations: async () => ({ ...MIGRATIONS }) },
  });
  const result: MigrationResultSet = await migrator.migrateToLatest();
  if (result.error !== undefined) {
    const failed = result.results?.find((migration) => migration.status === 'Error');
    throw new Error(`Migration ${failed?.migrationName ?? '(unknown)'} failed: ${String(result.error)}`, {
      cause: result.error,
    });
  }
  return (result.results ?? [])
    .filter((migration) => migration.status === 'Success')
    .map((migration) => migration.migrationName);
}
