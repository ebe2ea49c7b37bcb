import { useQuery } from '@tanstack/react-query';
import { useSearchParams } from 'react-router';
import { api, type Page, type SessionSummary } from '../api.ts';

/** The project's sessions, newest first. */
export function SessionList() {
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
