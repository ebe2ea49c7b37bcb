import type { ReactNode } from 'react';
import { NavLink } from 'react-router';
import { useScopedHref } from '../ui/links.tsx';
import { useWorkspace } from '../ui/workspace.tsx';
import './notifications.css';

const TABS: [string, string][] = [
  ['/notifications/inbox', 'Inbox'],
  ['/notifications/channels', 'Channels'],
  ['/notifications/rules', 'Rules'],
  ['/notifications/deliveries', 'Deliveries'],
];

/** Whether the signed-in person may change notifications (`notifications:write`: not viewers). */
export function useCanChangeNotifications(): boolean {
  return useWorkspace().organization.role !== 'viewer';
}

/** The notifications pages: a heading, the tabs (sub-pages with their own URLs), the page. */
export function NotificationsLayout({ title, children }: { title: string; children: ReactNode }) {
  const scoped = useScopedHref();
  return (
    <section className="notifications" aria-labelledby="notifications-title">
      <h1 id="notifications-title">Notifications: {title}</h1>
      <nav aria-label="Notifications" className="tabs">
        {TABS.map(([to, label]) => (
          <NavLink key={to} to={scoped(to)}>
            {label}
          </NavLink>
        ))}
      </nav>
      {children}
    </section>
  );
}
