import { useQuery } from '@tanstack/react-query';
import type { FormEvent } from 'react';
import { useSearchParams } from 'react-router';
import { api, type Page } from '../api.ts';
import { formatDateTime, formatDuration } from '../ui/format.ts';
import { AppLink } from '../ui/links.tsx';
import { QueryState } from '../ui/status.tsx';
import { useWorkspace } from '../ui/workspace.tsx';
import { sessionQuery, toLocalInput, withFilters } from './filters.ts';
import type { SessionSummary } from './types.ts';
import './sessions.css';

const LEVELS = ['critical', 'high', 'medium', 'low', 'info'] as const;

/** The project's sessions, newest first, with every filter of `GET /v1/sessions` in the URL. */
export function SessionList() {
  const [params, setParams] = useSearchParams();
  const { project } = useWorkspace();
  const query = sessionQuery(params);
  const sessions = useQuery({
    queryKey: ['sessions', project.id, query],
    queryFn: () => api<Page<SessionSummary>>('GET', `/v1/sessions?${query}`),
  });
  const filtered = sessionQuery(params) !== sessionQuery(new URLSearchParams());

  function apply(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    setParams(withFilters(params, new FormData(event.currentTarget)));
  }

  function page(cursor: string | undefined) {
    const next = new URLSearchParams(params);
    if (cursor === undefined) next.delete('cursor');
    else next.set('cursor', cursor);
    setParams(next);
  }

  return (
    <section aria-labelledby="sessions-title">
      <h1 id="sessions-title">Sessions</h1>
      {/* The key resets the uncontrolled fields when the URL changes (back, a link, "Clear"). */}
      <form className="filters" onSubmit={apply} aria-label="Filter sessions" key={params.toString()}>
        <label>
          Search
          <input
            name="q"
            type="search"
            defaultValue={params.get('q') ?? ''}
            placeholder="URL, user, release…"
          />
        </label>
        <label>
          URL contains
          <input name="urlContains" defaultValue={params.get('urlContains') ?? ''} />
        </label>
        <label>
          User (id or e-mail)
          <input name="user" defaultValue={params.get('user') ?? ''} />
        </label>
        <YesNo name="hasErrors" label="Errors" value={params.get('hasErrors')} />
        <YesNo name="hasGaps" label="Gaps" value={params.get('hasGaps')} />
        <label>
          Level at least
          <select name="level" defaultValue={params.get('level') ?? ''}>
            <option value="">Any</option>
            {LEVELS.map((level) => (
              <option key={level} value={level}>
                {level}
              </option>
            ))}
          </select>
        </label>
        <label>
          Browser
          <input name="browser" defaultValue={params.get('browser') ?? ''} placeholder="Chrome" />
        </label>
        <label>
          OS
          <input name="os" defaultValue={params.get('os') ?? ''} placeholder="Windows" />
        </label>
        <label>
          Device
          <select name="device" defaultValue={params.get('device') ?? ''}>
            <option value="">Any</option>
            <option value="desktop">Desktop</option>
            <option value="mobile">Mobile</option>
            <option value="tablet">Tablet</option>
          </select>
        </label>
        <label>
          Min. duration (s)
          <input
            name="minDurationSec"
            type="number"
            min={0}
            defaultValue={params.get('minDurationSec') ?? ''}
          />
        </label>
        <label>
          Max. duration (s)
          <input
            name="maxDurationSec"
            type="number"
            min={0}
            defaultValue={params.get('maxDurationSec') ?? ''}
          />
        </label>
        <label>
          Started from
          <input name="from" type="datetime-local" defaultValue={toLocalInput(params.get('from'))} />
        </label>
        <label>
          Started before
          <input name="to" type="datetime-local" defaultValue={toLocalInput(params.get('to'))} />
        </label>
        <label>
          Environment
          <input name="environment" defaultValue={params.get('environment') ?? ''} />
        </label>
        <label>
          Release
          <input name="release" defaultValue={params.get('release') ?? ''} />
        </label>
        <div className="filter-actions">
          <button type="submit">Apply filters</button>
          {filtered ? <AppLink to="/sessions">Clear filters</AppLink> : null}
        </div>
      </form>
      <QueryState query={sessions}>
        {(data) =>
          data.items.length === 0 ? (
            filtered ? (
              <p>No session matches these filters.</p>
            ) : (
              <EmptyProject />
            )
          ) : (
            <>
              <table className="sessions">
                <thead>
                  <tr>
                    <th scope="col">Started</th>
                    <th scope="col">Page</th>
                    <th scope="col">User</th>
                    <th scope="col">Duration</th>
                    <th scope="col">Errors</th>
                    <th scope="col">Level</th>
                    <th scope="col">Browser</th>
                    <th scope="col">Device</th>
                  </tr>
                </thead>
                <tbody>
                  {data.items.map((session) => (
                    <tr key={session.id} data-session-id={session.id}>
                      <td>
                        <AppLink to={`/sessions/${encodeURIComponent(session.id)}`}>
                          {formatDateTime(session.startedAt)}
                        </AppLink>
                        {session.hasGaps ? <span className="badge">gaps</span> : null}
                      </td>
                      <td className="url">{session.url ?? '—'}</td>
                      <td>{session.user?.email ?? session.user?.name ?? session.user?.id ?? '—'}</td>
                      <td>{formatDuration(session.durationMs)}</td>
                      <td>{session.errorCount}</td>
                      <td>{session.level ?? '—'}</td>
                      <td>
                        {session.browser === undefined
                          ? '—'
                          : `${session.browser.name} ${session.browser.version ?? ''}`.trim()}
                      </td>
                      <td>{session.device ?? '—'}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
              <nav aria-label="Pages" className="pager">
                {params.has('cursor') ? (
                  <button type="button" onClick={() => page(undefined)}>
                    First page
                  </button>
                ) : null}
                {data.nextCursor === undefined ? null : (
                  <button type="button" onClick={() => page(data.nextCursor)}>
                    Next page
                  </button>
                )}
              </nav>
            </>
          )
        }
      </QueryState>
    </section>
  );
}

/** A yes/no/any choice for a boolean filter. */
function YesNo({ name, label, value }: { name: string; label: string; value: string | null }) {
  return (
    <label>
      {label}
      <select name={name} defaultValue={value ?? ''}>
        <option value="">Any</option>
        <option value="true">Yes</option>
        <option value="false">No</option>
      </select>
    </label>
  );
}

/** A project with no session yet: how to install the SDK, with this project's key. */
function EmptyProject() {
  const { project } = useWorkspace();
  const snippet = `import { init } from '@svc/browser-sdk';

init({
  projectKey: '${project.projectKey}',
  endpoint: '${window.location.origin}',
});`;
  return (
    <div className="empty">
      <p>No sessions yet. Install the browser SDK in your app with this project's key:</p>
      <pre>
        <code>{`pnpm add @svc/browser-sdk\n\n${snippet}`}</code>
      </pre>
    </div>
  );
}
