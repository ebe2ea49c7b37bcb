import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { useSearchParams } from 'react-router';
import { api, type Page } from '../api.ts';
import { formatDateTime } from '../ui/format.ts';
import { AppLink } from '../ui/links.tsx';
import { ErrorText, QueryState } from '../ui/status.tsx';
import { useWorkspace } from '../ui/workspace.tsx';
import { ISSUE_KINDS, kindLabel } from './kinds.ts';
import type { Issue, IssueStatus } from './types.ts';
import './issues.css';

const PAGE_SIZE = 25;

const BULK_WORDS: Record<IssueStatus, string> = {
  resolved: 'Resolve selected',
  ignored: 'Ignore selected',
  open: 'Reopen selected',
};
const STATUS_DONE: Record<IssueStatus, string> = {
  resolved: 'resolved',
  ignored: 'ignored',
  open: 'reopened',
};

/**
 * The project's issues, most recently seen first. The filters and the page live in the URL
 * (`?status=&kind=&cursor=`): `status` defaults to `open` (what needs attention, as Sentry's
 * "unresolved"), `all` shows every status. People who may change issues select some and resolve,
 * ignore or reopen them at once (`PATCH /v1/issues`).
 */
export function IssueList() {
  const { project, organization } = useWorkspace();
  const canWrite = organization.role !== 'viewer';
  const queryClient = useQueryClient();
  const [selected, setSelected] = useState<ReadonlySet<string>>(new Set());
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

  const [bulkMessage, setBulkMessage] = useState('');
  const bulk = useMutation({
    mutationFn: (status: IssueStatus) =>
      api<Page<Issue>>('PATCH', '/v1/issues', { ids: [...selected], status }),
    onSuccess: (changed, status) => {
      setSelected(new Set());
      setBulkMessage(
        `${changed.items.length} ${changed.items.length === 1 ? 'issue' : 'issues'} ${STATUS_DONE[status]}.`,
      );
      void queryClient.invalidateQueries({ queryKey: ['issues', project.id] });
      void queryClient.invalidateQueries({ queryKey: ['issue', project.id] });
    },
  });
  const visible = issues.data?.items ?? [];
  const allSelected = visible.length > 0 && visible.every((issue) => selected.has(issue.id));

  function toggle(id: string, on: boolean) {
    const next = new Set(selected);
    if (on) next.add(id);
    else next.delete(id);
    setSelected(next);
  }

  /** Changes URL parameters; any filter change goes back to the first page. */
  function change(values: Record<string, string | undefined>) {
    setSelected(new Set());
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
      {canWrite ? (
        <div className="bulk-actions" role="toolbar" aria-label="Change the selected issues">
          <span>{selected.size} selected</span>
          {(['resolved', 'ignored', 'open'] as const).map((status) => (
            <button
              key={status}
              type="button"
              disabled={selected.size === 0 || bulk.isPending}
              onClick={() => bulk.mutate(status)}
            >
              {BULK_WORDS[status]}
            </button>
          ))}
          <span role="status">{bulkMessage}</span>
        </div>
      ) : null}
      {bulk.error ? <ErrorText>{bulk.error.message}</ErrorText> : null}
      <QueryState query={issues}>
        {(page) =>
          page.items.length === 0 ? (
            <p>{cursor === undefined ? 'No issues match these filters.' : 'No more issues.'}</p>
          ) : (
            <table>
              <thead>
                <tr>
                  {canWrite ? (
                    <th scope="col">
                      <input
                        type="checkbox"
                        aria-label="Select every issue of this page"
                        checked={allSelected}
                        onChange={(event) =>
                          setSelected(
                            new Set(event.target.checked ? page.items.map((issue) => issue.id) : []),
                          )
                        }
                      />
                    </th>
                  ) : null}
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
                    {canWrite ? (
                      <td>
                        <input
                          type="checkbox"
                          aria-label={`Select “${issue.title}”`}
                          checked={selected.has(issue.id)}
                          onChange={(event) => toggle(issue.id, event.target.checked)}
                        />
                      </td>
                    ) : null}
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
