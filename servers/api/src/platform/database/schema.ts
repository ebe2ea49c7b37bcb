import type {
  EmailVerificationTokensTable,
  MagicLinkTokensTable,
  MfaChallengesTable,
  MfaRecoveryCodesTable,
  PasswordResetTokensTable,
  UserMfaTable,
  UserSessionsTable,
  UsersTable,
} from './tables/accounts.table.ts';
import type { AiJobsTable } from './tables/ai-jobs.table.ts';
import type { AiFeedbackTable, AiSettingsTable, AiUsageTable } from './tables/ai-settings.table.ts';
import type { ApiTokensTable } from './tables/api-tokens.table.ts';
import type {
  AssetFetchesTable,
  AssetJobsTable,
  AssetProgressTable,
  SessionAssetsTable,
} from './tables/assets.table.ts';
import type {
  BillingAccountsTable,
  BillingEventsTable,
  DeploymentLicenseTable,
} from './tables/billing.table.ts';
import type { CallProgressTable, CallSeriesPiecesTable } from './tables/call-progress.table.ts';
import type { CallFindingsTable, CallItemsTable, CallsTable, CallTracksTable } from './tables/calls.table.ts';
import type { ChunksTable } from './tables/chunks.table.ts';
import type { DsarRequestsTable } from './tables/dsar.table.ts';
import type {
  ClickFactsTable,
  FunnelsTable,
  InsightAlertsTable,
  InsightJobsTable,
  InsightProgressTable,
  PageViewsTable,
} from './tables/insights.table.ts';
import type {
  ClusterFingerprintsTable,
  ClusterOccurrencesTable,
  IssueClustersTable,
} from './tables/issues.table.ts';
import type { LeakRadarReportsTable } from './tables/leak-radar.table.ts';
import type {
  DeliveriesTable,
  DeliveryAttemptsTable,
  NotificationChannelsTable,
  NotificationEventsTable,
  NotificationRulesTable,
  RuleThrottlesTable,
} from './tables/notifications.table.ts';
import type {
  OAuthCreatedAccountsTable,
  OAuthFlowsTable,
  OAuthIdentitiesTable,
} from './tables/oauth.table.ts';
import type {
  AuditLogTable,
  OrganizationInvitationsTable,
  OrganizationMembersTable,
  OrganizationsTable,
} from './tables/organizations.table.ts';
import type { PasskeyChallengesTable, PasskeysTable } from './tables/passkeys.table.ts';
import type { BlobDeletionsTable, ErasureRequestsTable } from './tables/privacy.table.ts';
import type { ProcessingJobsTable } from './tables/processing-jobs.table.ts';
import type { ProjectsTable } from './tables/projects.table.ts';
import type { AiAnomaliesTable, AiDigestsTable } from './tables/reports.table.ts';
import type { SamlAssertionsTable, SamlRequestsTable } from './tables/saml.table.ts';
import type { SessionSignalsTable } from './tables/session-signals.table.ts';
import type { SessionsTable } from './tables/sessions.table.ts';
import type { ShareLinksTable } from './tables/share-links.table.ts';
import type { SourcemapFilesTable } from './tables/sourcemaps.table.ts';
import type { SsoConnectionsTable, SsoDomainsTable } from './tables/sso.table.ts';
import type { SsoIdentitiesTable, SsoOidcFlowsTable } from './tables/sso-flows.table.ts';
import type { LogRecordsTable, SpansTable } from './tables/traces.table.ts';
import type {
  UsageCapsTable,
  UsageDailyTable,
  UsageReportsTable,
  UsageThresholdsTable,
} from './tables/usage.table.ts';

/** Every table the server reads and writes, for `Kysely<Database>`. */
export interface Database {
  organizations: OrganizationsTable;
  organization_members: OrganizationMembersTable;
  organization_invitations: OrganizationInvitationsTable;
  audit_log: AuditLogTable;
  projects: ProjectsTable;
  api_tokens: ApiTokensTable;
  sessions: SessionsTable;
  chunks: ChunksTable;
  session_signals: SessionSignalsTable;
  share_links: ShareLinksTable;
  call_items: CallItemsTable;
  calls: CallsTable;
  call_tracks: CallTracksTable;
  call_findings: CallFindingsTable;
  call_progress: CallProgressTable;
  call_series_pieces: CallSeriesPiecesTable;
  issue_clusters: IssueClustersTable;
  cluster_occurrences: ClusterOccurrencesTable;
  cluster_fingerprints: ClusterFingerprintsTable;
  notification_channels: NotificationChannelsTable;
  notification_rules: NotificationRulesTable;
  rule_throttles: RuleThrottlesTable;
  notification_events: NotificationEventsTable;
  deliveries: DeliveriesTable;
  delivery_attempts: DeliveryAttemptsTable;
  processing_jobs: ProcessingJobsTable;
  users: UsersTable;
  email_verification_tokens: EmailVerificationTokensTable;
  user_sessions: UserSessionsTable;
  password_reset_tokens: PasswordResetTokensTable;
  user_mfa: UserMfaTable;
  mfa_recovery_codes: MfaRecoveryCodesTable;
  mfa_challenges: MfaChallengesTable;
  magic_link_tokens: MagicLinkTokensTable;
  insight_jobs: InsightJobsTable;
  insight_progress: InsightProgressTable;
  page_views: PageViewsTable;
  click_facts: ClickFactsTable;
  funnels: FunnelsTable;
  insight_alerts: InsightAlertsTable;
  spans: SpansTable;
  log_records: LogRecordsTable;
  asset_fetches: AssetFetchesTable;
  session_assets: SessionAssetsTable;
  asset_jobs: AssetJobsTable;
  asset_progress: AssetProgressTable;
  sourcemap_files: SourcemapFilesTable;
  ai_jobs: AiJobsTable;
  ai_anomalies: AiAnomaliesTable;
  ai_digests: AiDigestsTable;
  ai_settings: AiSettingsTable;
  usage_daily: UsageDailyTable;
  usage_caps: UsageCapsTable;
  usage_thresholds: UsageThresholdsTable;
  usage_reports: UsageReportsTable;
  ai_usage: AiUsageTable;
  ai_feedback: AiFeedbackTable;
  deployment_license: DeploymentLicenseTable;
  billing_accounts: BillingAccountsTable;
  billing_events: BillingEventsTable;
  leak_radar_reports: LeakRadarReportsTable;
  blob_deletions: BlobDeletionsTable;
  erasure_requests: ErasureRequestsTable;
  dsar_requests: DsarRequestsTable;
  sso_connections: SsoConnectionsTable;
  sso_domains: SsoDomainsTable;
  passkeys: PasskeysTable;
  passkey_challenges: PasskeyChallengesTable;
  sso_identities: SsoIdentitiesTable;
  sso_oidc_flows: SsoOidcFlowsTable;
  saml_requests: SamlRequestsTable;
  saml_assertions: SamlAssertionsTable;
  oauth_identities: OAuthIdentitiesTable;
  oauth_flows: OAuthFlowsTable;
  oauth_created_accounts: OAuthCreatedAccountsTable;
}
