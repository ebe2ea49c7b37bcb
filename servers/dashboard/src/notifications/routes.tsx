import { Navigate } from 'react-router';
import { useScopedHref } from '../ui/links.tsx';
import type { AppRoute } from '../ui/routes.ts';
import { Channels } from './Channels.tsx';
import { Deliveries } from './Deliveries.tsx';
import { Inbox } from './Inbox.tsx';
import { Rules } from './Rules.tsx';

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
