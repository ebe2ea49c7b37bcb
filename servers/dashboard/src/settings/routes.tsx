import type { ReactNode } from 'react';
import { Navigate, useParams, useSearchParams } from 'react-router';
import { lazyPage } from '../ui/lazy.ts';
import { useScopedHref } from '../ui/links.tsx';
import type { AppRoute } from '../ui/routes.ts';

// The settings pages are one lazy chunk (with the QR code encoder): the first load of the app
// does not carry them.
type Pages = typeof import('./pages.ts');

function page(name: keyof Pages): ReactNode {
  const Page = lazyPage(() => import('./pages.ts'), name);
  return <Page />;
}

/** `/settings` opens the project's settings, keeping the organization and project. */
function SettingsHome() {
  const scoped = useScopedHref();
  return <Navigate to={scoped('/settings/project')} replace />;
}

/**
 * The links the API writes (`<app>/orgs/{orgId}/usage` in `usage.threshold`, `/orgs/{orgId}/billing`
 * in `billing.event` and as Stripe's return address, with `?checkout=`): the settings page of that
 * organization, with the rest of the query kept.
 */
function OrganizationPage({ to }: { to: string }) {
  const { orgId = '' } = useParams();
  const [params] = useSearchParams();
  const query = new URLSearchParams(params);
  query.set('org', orgId);
  query.delete('project');
  return <Navigate to={`${to}?${query}`} replace />;
}

export const settingsRoutes: AppRoute[] = [
  { path: '/settings', element: <SettingsHome />, access: 'signed-in' },
  { path: '/settings/project', element: page('ProjectSettingsPage'), access: 'signed-in' },
  { path: '/settings/members', element: page('MembersPage'), access: 'signed-in' },
  { path: '/settings/ai', element: page('AiSettingsPage'), access: 'signed-in' },
  { path: '/settings/usage', element: page('UsagePage'), access: 'signed-in' },
  { path: '/settings/billing', element: page('BillingPage'), access: 'signed-in' },
  { path: '/settings/privacy', element: page('PrivacyPage'), access: 'signed-in' },
  { path: '/settings/domains', element: page('DomainsPage'), access: 'signed-in' },
  { path: '/orgs/:orgId/usage', element: <OrganizationPage to="/settings/usage" />, access: 'signed-in' },
  { path: '/orgs/:orgId/billing', element: <OrganizationPage to="/settings/billing" />, access: 'signed-in' },
  { path: '/settings/sso', element: page('SsoPage'), access: 'signed-in' },
  { path: '/orgs/:orgId/sso', element: <OrganizationPage to="/settings/sso" />, access: 'signed-in' },
  { path: '/settings/tokens', element: page('TokensPage'), access: 'signed-in' },
  { path: '/settings/audit', element: page('AuditLogPage'), access: 'signed-in' },
  { path: '/settings/profile', element: page('ProfilePage'), access: 'signed-in' },
];
