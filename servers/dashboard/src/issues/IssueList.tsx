import { useQuery } from '@tanstack/react-query';
import { useSearchParams } from 'react-router';
import { api, type Page } from '../api.ts';
import { formatDateTime } from '../ui/format.ts';
import { AppLink } from '../ui/links.tsx';
import { QueryState } from '../ui/status.tsx';
import { useWorkspace } from '../ui/workspace.tsx';
import { ISSUE_KINDS, kindLabel } from './kinds.ts';
import type { Issue } from './types.ts';
import './issues.css';

const PAGE_SIZE = 25;

/**
 * The project's issues, most recently seen first. The filters and the page live in the URL
 * (`?status=&kind=&cursor=`): `status` defaults to `open` (what needs attention, as Sentry's
 * "unresolved"), `all` shows every status.
 */
export function IssueList() {
  const { project } = useWorkspace();
  const [params, setParams] = useSearchParams();
  const status = params.get('status') ?? 'open';
  const kind = params.get('kind') ?? '';
  const cursor = params.get('cursor') ?? undefined;
  const query = new URLSearchParams({ limit: String(PAGE_SIZE) });
  if (status !== 'all') query.set('status', status);
  if (kind !== '') query.set('kind', kind);
  if (cursor !== undefined) query.set('cursor', cursor);
  const issues = useQuery({
    queryKey: ['issues', project.id, query.toString()],
    queryFn: () => api<Page<Issue>>('GET', `/v1/issues?${query}`),
  });

  /** Changes URL parameters; any filter change goes back to the first page. */
  function change(values: Record<string, string | undefined>) {
    const next = new URLSearchParams(params);
    for (const [name, value] of Object.entries(values)) {
      if (value === undefined || value === '') next.delete(name);
      else next.set(name, value);
    }
    if (!('cursor' in values)) next.delete('cursor');
    setParams(next);
  }

  return (
    <section aria-labelledby="issues-title" className="issues">
      <h1 id="issues-title">Issues</h1>
      <form className="issue-filters" aria-label="Filter issues" onSubmit={(event) => event.preventDefault()}>
        <label>
          Status
          <select value={status} onChange={(event) => change({ status: event.target.value })}>
            <option value="open">Open</option>
            <option value="resolved">Resolved</option>
            <option value="ignored">Ignored</option>
            <option value="all">All statuses</option>
          </select>
        </label>
        <label>
          Kind
          <select value={kind} onChange={(event) => change({ kind: event.target.value })}>
            <option value="">All kinds</option>
            {Object.entries(ISSUE_KINDS).map(([value, label]) => (
              <option key={value} value={value}>
                {label}
              </option>
            ))}
          </select>
        </label>
      </form>
      <QueryState query={issues}>
        {(page) =>
          page.items.length === 0 ? (
            <p>{cursor === undefined ? 'No issues match these filters.' : 'No more issues.'}</p>
          ) : (
            <table>
              <thead>
                <tr>
                  <th scope="col">Issue</th>
                  <th scope="col">Severity</th>
                  <th scope="col">Status</th>
                  <th scope="col">Last 24 h</th>
                  <th scope="col">Occurrences</th>
                  <th scope="col">Sessions</th>
                  <th scope="col">Last seen</th>
                  <th scope="col">First seen</th>
                </tr>
              </thead>
              <tbody>
                {page.items.map((issue) => (
                  <tr key={issue.id} data-issue-id={issue.id}>
                    <td>
                      <AppLink to={`/issues/${issue.id}`}>{issue.title}</AppLink>
                      <div className="issue-kind">
                        {kindLabel(issue.kind)}
                        {issue.lastRelease === undefined ? null : ` · ${issue.lastRelease}`}
                      </div>
                    </td>
                    <td>
                      <span className={`badge severity-${issue.severity}`}>{issue.severity}</span>
                    </td>
                    <td>
                      <span className={`badge status-${issue.status}`}>{issue.status}</span>
                    </td>
                    <td>{issue.count24h}</td>
                    <td>{issue.occurrences}</td>
                    <td>{issue.sessions}</td>
                    <td>{formatDateTime(issue.lastSeenAt)}</td>
                    <td>{formatDateTime(issue.firstSeenAt)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          )
        }
      </QueryState>
      <nav aria-label="Pages of issues" className="pager">
        {cursor === undefined ? null : (
          <button type="button" onClick={() => change({ cursor: undefined })}>
            First page
          </button>
        )}
        {issues.data?.nextCursor === undefined ? null : (
          <button type="button" onClick={() => change({ cursor: issues.data?.nextCursor })}>
            Next page
          </button>
        )}
      </nav>
    </section>
  );
}
