import { Navigate } from 'react-router';
import { lazyPage } from '../ui/lazy.ts';
import { useScopedHref } from '../ui/links.tsx';
import type { AppRoute } from '../ui/routes.ts';

const Channels = lazyPage(() => import('./Channels.tsx'), 'Channels');
const Deliveries = lazyPage(() => import('./Deliveries.tsx'), 'Deliveries');
const Inbox = lazyPage(() => import('./Inbox.tsx'), 'Inbox');
const Rules = lazyPage(() => import('./Rules.tsx'), 'Rules');

/** A redirect that keeps the organization and project. */
function Redirect({ to }: { to: string }) {
  const scoped = useScopedHref();
  return <Navigate to={scoped(to)} replace />;
}

export const notificationRoutes: AppRoute[] = [
  { path: '/notifications', element: <Redirect to="/notifications/inbox" />, access: 'signed-in' },
  { path: '/notifications/inbox', element: <Inbox />, access: 'signed-in' },
  { path: '/notifications/channels', element: <Channels />, access: 'signed-in' },
  { path: '/notifications/rules', element: <Rules />, access: 'signed-in' },
  { path: '/notifications/deliveries', element: <Deliveries />, access: 'signed-in' },
  // The link a test notification carries (`links.channel` of notification.test).
  {
    path: '/settings/notifications/channels/:id',
    element: <Redirect to="/notifications/channels" />,
    access: 'signed-in',
  },
];
