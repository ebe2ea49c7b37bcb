import { useQuery, useQueryClient } from '@tanstack/react-query';
import type { FormEvent, ReactNode } from 'react';
import { useLocation, useNavigate, useSearchParams } from 'react-router';
import { api, type Me, type Organization, type Project, rememberCsrfToken, selectProject } from '../api.ts';
import { AppLink, useScopedHref } from '../ui/links.tsx';
import { WorkspaceContext } from '../ui/workspace.tsx';
import { CreateOrganization, CreateProject } from './Onboarding.tsx';

/** The main navigation: one entry per area of the app (insights: the overview, then its other pages). */
const NAVIGATION: [string, string][] = [
  ['/overview', 'Overview'],
  ['/sessions', 'Sessions'],
  ['/calls', 'Calls'],
  ['/issues', 'Issues'],
  ['/vitals', 'Insights'],
  ['/notifications', 'Notifications'],
  ['/settings/project', 'Settings'],
];

/** The id `wanted` when `items` has it, else the first item's; undefined while loading. */
function pick(items: { id: string }[] | undefined, wanted: string | null): string | undefined {
  if (items === undefined) return undefined;
  return (items.find((item) => item.id === wanted) ?? items[0])?.id;
}

/**
 * The header's search box: opens the search page (`/search?q=`, a lazy chunk) in the current
 * organization and project.
 */
function QuickSearch({ current }: { current: string }) {
  const navigate = useNavigate();
  const scoped = useScopedHref();
  function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const words = String(new FormData(event.currentTarget).get('q') ?? '').trim();
    if (words !== '') navigate(scoped(`/search?q=${encodeURIComponent(words)}`));
  }
  return (
    <search aria-label="Quick search" className="app-search">
      <form onSubmit={submit} key={current}>
        <input
          name="q"
          type="search"
          defaultValue={current}
          aria-label="Search sessions, calls and issues"
          placeholder="Search sessions, calls, issues"
        />
        <button type="submit">Search</button>
      </form>
    </search>
  );
}

/** The header: who is signed in, the organization and project switcher, search, sign out. */
export function Shell({ me, children }: { me: Me; children: ReactNode }) {
  const [params, setParams] = useSearchParams();
  const location = useLocation();
  const navigate = useNavigate();
  const queryClient = useQueryClient();
  const orgs = useQuery({
    queryKey: ['orgs'],
    queryFn: () => api<{ items: Organization[] }>('GET', '/v1/orgs'),
  });
  // The URL's choice when it names one of theirs (a link from a teammate may not), else the first.
  const orgId = pick(orgs.data?.items, params.get('org'));
  const projects = useQuery({
    queryKey: ['projects', orgId],
    enabled: orgId !== undefined,
    queryFn: () => api<{ items: Project[] }>('GET', `/v1/orgs/${orgId}/projects`),
  });
  const projectId = pick(projects.data?.items, params.get('project'));
  selectProject(projectId);
  const organization = orgs.data?.items.find((org) => org.id === orgId);
  const project = projects.data?.items.find((candidate) => candidate.id === projectId);

  function choose(name: 'org' | 'project', value: string) {
    const next = new URLSearchParams(params);
    next.set(name, value);
    if (name === 'org') next.delete('project');
    setParams(next);
  }

  async function signOut() {
    await api('POST', '/auth/logout');
    rememberCsrfToken(undefined);
    queryClient.clear();
    navigate('/login', { replace: true });
  }

  return (
    <>
      <header className="app-header">
        <span className="brand">svc</span>
        <label>
          Organization
          <select value={orgId ?? ''} onChange={(event) => choose('org', event.target.value)}>
            {orgs.data?.items.map((org) => (
              <option key={org.id} value={org.id}>
                {org.name}
              </option>
            ))}
          </select>
        </label>
        <label>
          Project
          <select value={projectId ?? ''} onChange={(event) => choose('project', event.target.value)}>
            {projects.data?.items.map((project) => (
              <option key={project.id} value={project.id}>
                {project.name}
              </option>
            ))}
          </select>
        </label>
        <QuickSearch current={location.pathname === '/search' ? (params.get('q') ?? '') : ''} />
        <span>{me.user.name ?? me.user.email}</span>
        <button type="button" onClick={signOut}>
          Sign out
        </button>
      </header>
      <nav aria-label="Main" className="app-nav">
        {NAVIGATION.map(([to, label]) => (
          <AppLink key={to} to={to}>
            {label}
          </AppLink>
        ))}
      </nav>
      <main>
        {orgs.data !== undefined && orgs.data.items.length === 0 ? (
          <CreateOrganization onCreated={(created) => choose('org', created.id)} />
        ) : organization !== undefined && projects.data !== undefined && projects.data.items.length === 0 ? (
          <CreateProject organization={organization} onCreated={(created) => choose('project', created.id)} />
        ) : organization === undefined || project === undefined ? (
          <p aria-busy="true">Loading…</p>
        ) : (
          <WorkspaceContext.Provider value={{ me, organization, project }}>
            <div key={project.id}>{children}</div>
          </WorkspaceContext.Provider>
        )}
      </main>
    </>
  );
}
