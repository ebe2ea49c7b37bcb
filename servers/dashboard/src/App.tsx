import { useQuery, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, type ReactNode, useEffect, useState } from 'react';
import { Navigate, Route, Routes, useLocation, useNavigate, useSearchParams } from 'react-router';
import {
  ApiFailure,
  api,
  type Me,
  type Organization,
  type Page,
  type Project,
  rememberCsrfToken,
  type SessionSummary,
  selectProject,
} from './api.ts';

/** The app's routes: the sign-in pages are public; everything else needs a session. */
export function App() {
  return (
    <Routes>
      <Route path="/login" element={<SignIn />} />
      <Route path="/magic-link" element={<MagicLink />} />
      <Route
        path="/sessions"
        element={
          <SignedIn>
            <Sessions />
          </SignedIn>
        }
      />
      <Route path="*" element={<Navigate to="/sessions" replace />} />
    </Routes>
  );
}

/** Where to go after signing in: the page that asked for it, else the sessions. */
function useNextPage(): string {
  const [params] = useSearchParams();
  const next = params.get('next');
  return next?.startsWith('/') && !next.startsWith('//') ? next : '/sessions';
}

type SignInAnswer = { user: Me['user']; csrfToken: string } | { mfaRequired: true; mfaToken: string };

/** Password sign-in, then the second factor when the account has it on. */
function SignIn() {
  const navigate = useNavigate();
  const next = useNextPage();
  const queryClient = useQueryClient();
  const [mfaToken, setMfaToken] = useState<string | undefined>();
  const [error, setError] = useState<string | undefined>();
  const [busy, setBusy] = useState(false);

  async function finish(answer: SignInAnswer) {
    if ('mfaRequired' in answer) {
      setMfaToken(answer.mfaToken);
      return;
    }
    rememberCsrfToken(answer.csrfToken);
    await queryClient.invalidateQueries();
    navigate(next, { replace: true });
  }

  async function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    setBusy(true);
    setError(undefined);
    try {
      if (mfaToken === undefined) {
        await finish(
          await api<SignInAnswer>('POST', '/auth/login', {
            email: String(form.get('email')),
            password: String(form.get('password')),
          }),
        );
      } else {
        await finish(
          await api<SignInAnswer>('POST', '/auth/mfa/verify', { mfaToken, code: String(form.get('code')) }),
        );
      }
    } catch (failure) {
      setError(failure instanceof Error ? failure.message : String(failure));
    } finally {
      setBusy(false);
    }
  }

  return (
    <main>
      <form className="card" onSubmit={submit} aria-labelledby="sign-in-title">
        <h1 id="sign-in-title">Sign in</h1>
        {mfaToken === undefined ? (
          <>
            <label>
              E-mail address
              <input name="email" type="email" autoComplete="username" required />
            </label>
            <label>
              Password
              <input name="password" type="password" autoComplete="current-password" required />
            </label>
          </>
        ) : (
          <label>
            Code from your authenticator app, or a recovery code
            <input name="code" autoComplete="one-time-code" required />
          </label>
        )}
        {error === undefined ? null : (
          <p className="error" role="alert">
            {error}
          </p>
        )}
        <button type="submit" disabled={busy}>
          {mfaToken === undefined ? 'Sign in' : 'Verify'}
        </button>
      </form>
    </main>
  );
}

/** The page of an e-mailed (or printed) one-time sign-in link: posts its token once. */
function MagicLink() {
  const [params] = useSearchParams();
  const navigate = useNavigate();
  const token = params.get('token') ?? '';
  const [error, setError] = useState<string | undefined>();
  useEffect(() => {
    let cancelled = false;
    api<SignInAnswer>('POST', '/auth/magic-link', { token }).then(
      (answer) => {
        if (cancelled) return;
        if ('mfaRequired' in answer) navigate('/login', { replace: true });
        else {
          rememberCsrfToken(answer.csrfToken);
          navigate('/sessions', { replace: true });
        }
      },
      (failure: unknown) => {
        if (!cancelled) setError(failure instanceof Error ? failure.message : String(failure));
      },
    );
    return () => {
      cancelled = true;
    };
  }, [token, navigate]);
  return (
    <main>
      <h1>Signing in…</h1>
      {error === undefined ? null : (
        <p className="error" role="alert">
          {error}
        </p>
      )}
    </main>
  );
}

/** Its children once the session is known; the sign-in page otherwise. */
function SignedIn({ children }: { children: ReactNode }) {
  const location = useLocation();
  const me = useQuery({ queryKey: ['me'], queryFn: () => api<Me>('GET', '/v1/me') });
  if (me.isPending) return <p>Loading…</p>;
  if (me.error instanceof ApiFailure && me.error.status === 401)
    return <Navigate to={`/login?next=${encodeURIComponent(location.pathname + location.search)}`} replace />;
  if (me.error) return <p className="error">{me.error.message}</p>;
  rememberCsrfToken(me.data.csrfToken);
  return <Shell me={me.data}>{children}</Shell>;
}

/** The header: who is signed in, the organization and project switcher, sign out. */
function Shell({ me, children }: { me: Me; children: ReactNode }) {
  const [params, setParams] = useSearchParams();
  const navigate = useNavigate();
  const queryClient = useQueryClient();
  const orgs = useQuery({
    queryKey: ['orgs'],
    queryFn: () => api<{ items: Organization[] }>('GET', '/v1/orgs'),
  });
  const orgId = params.get('org') ?? orgs.data?.items[0]?.id;
  const projects = useQuery({
    queryKey: ['projects', orgId],
    enabled: orgId !== undefined,
    queryFn: () => api<{ items: Project[] }>('GET', `/v1/orgs/${orgId}/projects`),
  });
  const projectId = params.get('project') ?? projects.data?.items[0]?.id;
  selectProject(projectId);

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
        <span>{me.user.name ?? me.user.email}</span>
        <button type="button" onClick={signOut}>
          Sign out
        </button>
      </header>
      <main>{projectId === undefined ? <p>No project yet.</p> : <div key={projectId}>{children}</div>}</main>
    </>
  );
}

/** The project's sessions, newest first. */
function Sessions() {
  const [params] = useSearchParams();
  const project = params.get('project') ?? 'first';
  const sessions = useQuery({
    queryKey: ['sessions', project],
    queryFn: () => api<Page<SessionSummary>>('GET', '/v1/sessions?limit=50'),
  });
  return (
    <section aria-labelledby="sessions-title">
      <h1 id="sessions-title">Sessions</h1>
      {sessions.isPending ? <p>Loading…</p> : null}
      {sessions.error ? <p className="error">{sessions.error.message}</p> : null}
      {sessions.data === undefined ? null : sessions.data.items.length === 0 ? (
        <p>No sessions yet: install the browser SDK with this project's key.</p>
      ) : (
        <table>
          <thead>
            <tr>
              <th scope="col">Started</th>
              <th scope="col">Page</th>
              <th scope="col">Duration</th>
              <th scope="col">Errors</th>
              <th scope="col">Browser</th>
            </tr>
          </thead>
          <tbody>
            {sessions.data.items.map((session) => (
              <tr key={session.id} data-session-id={session.id}>
                <td>{new Date(session.startedAt).toLocaleString()}</td>
                <td>{session.url ?? '—'}</td>
                <td>{Math.round(session.durationMs / 1000)} s</td>
                <td>{session.errorCount}</td>
                <td>
                  {session.browser === undefined ? '—' : `${session.browser.name} ${session.browser.version}`}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}
