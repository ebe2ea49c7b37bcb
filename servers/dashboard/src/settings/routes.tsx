import type { ReactNode } from 'react';
import { Navigate } from 'react-router';
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

export const settingsRoutes: AppRoute[] = [
  { path: '/settings', element: <SettingsHome />, access: 'signed-in' },
  { path: '/settings/project', element: page('ProjectSettingsPage'), access: 'signed-in' },
  { path: '/settings/members', element: page('MembersPage'), access: 'signed-in' },
  { path: '/settings/ai', element: page('AiSettingsPage'), access: 'signed-in' },
  { path: '/settings/tokens', element: page('TokensPage'), access: 'signed-in' },
  { path: '/settings/audit', element: page('AuditLogPage'), access: 'signed-in' },
  { path: '/settings/profile', element: page('ProfilePage'), access: 'signed-in' },
];
