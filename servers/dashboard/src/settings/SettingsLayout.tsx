import type { ReactNode } from 'react';
import { NavLink } from 'react-router';
import { useScopedHref } from '../ui/links.tsx';
import { useWorkspace } from '../ui/workspace.tsx';
import { administers } from './permissions.ts';
import './settings.css';

/** The settings pages, in the order of the sub-navigation; `admin` ones are for admins and owners. */
const PAGES: { to: string; label: string; admin?: boolean }[] = [
  { to: '/settings/project', label: 'Project' },
  { to: '/settings/members', label: 'Members' },
  { to: '/settings/ai', label: 'AI' },
  { to: '/settings/usage', label: 'Usage' },
  { to: '/settings/billing', label: 'Billing', admin: true },
  { to: '/settings/privacy', label: 'Privacy', admin: true },
  { to: '/settings/sso', label: 'Single sign-on', admin: true },
  { to: '/settings/domains', label: 'Domains', admin: true },
  { to: '/settings/tokens', label: 'API tokens', admin: true },
  { to: '/settings/audit', label: 'Audit log', admin: true },
  { to: '/settings/profile', label: 'Your profile' },
];

/** A settings page: its heading, the settings sub-navigation, then the page. */
export function SettingsLayout({ title, children }: { title: string; children: ReactNode }) {
  const { organization } = useWorkspace();
  const scoped = useScopedHref();
  return (
    <div className="settings">
      <nav aria-label="Settings" className="settings-nav">
        <ul>
          {PAGES.filter((page) => !page.admin || administers(organization.role)).map((page) => (
            <li key={page.to}>
              <NavLink to={scoped(page.to)}>{page.label}</NavLink>
            </li>
          ))}
        </ul>
      </nav>
      <section className="settings-page" aria-labelledby="settings-title">
        <h1 id="settings-title">{title}</h1>
        {children}
      </section>
    </div>
  );
}

/** What a person whose role does not allow changes reads above a read-only page. */
export function ReadOnlyNote({ what }: { what: string }) {
  const { organization } = useWorkspace();
  return (
    <p className="settings-note" role="note">
      Your role in {organization.name} is <strong>{organization.role}</strong>: you can see {what}; admins and
      owners change them.
    </p>
  );
}
