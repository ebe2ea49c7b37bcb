import { Navigate } from 'react-router';
import { useScopedHref } from '../ui/links.tsx';
import type { AppRoute } from '../ui/routes.ts';
import { AuditLogPage } from './AuditLog.tsx';
import { MembersPage } from './Members.tsx';
import { ProfilePage } from './Profile.tsx';
import { ProjectSettingsPage } from './ProjectSettings.tsx';
import { TokensPage } from './Tokens.tsx';

/** `/settings` opens the project's settings, keeping the organization and project. */
function SettingsHome() {
  const scoped = useScopedHref();
  return <Navigate to={scoped('/settings/project')} replace />;
}

export const settingsRoutes: AppRoute[] = [
  { path: '/settings', element: <SettingsHome />, access: 'signed-in' },
  { path: '/settings/project', element: <ProjectSettingsPage />, access: 'signed-in' },
  { path: '/settings/members', element: <MembersPage />, access: 'signed-in' },
  { path: '/settings/tokens', element: <TokensPage />, access: 'signed-in' },
  { path: '/settings/audit', element: <AuditLogPage />, access: 'signed-in' },
  { path: '/settings/profile', element: <ProfilePage />, access: 'signed-in' },
];
