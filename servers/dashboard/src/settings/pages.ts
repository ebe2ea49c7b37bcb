// Every settings page, for the lazy chunk `routes.tsx` loads.
export { AiSettingsPage } from './AiSettings.tsx';
export { AuditLogPage } from './AuditLog.tsx';
export { BillingPage } from './Billing.tsx';
export { DomainsPage } from './Domains.tsx';
export { MembersPage } from './Members.tsx';
export { PrivacyPage } from './Privacy.tsx';
export { ProfilePage } from './Profile.tsx';
export { ProjectSettingsPage } from './ProjectSettings.tsx';
export { SsoPage } from './Sso.tsx';
export { TokensPage } from './Tokens.tsx';
export { UsagePage } from './Usage.tsx';
