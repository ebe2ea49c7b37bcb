import { useInfiniteQuery, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { useParams } from 'react-router';
import { api, type Page } from '../api.ts';
import { formatDateTime } from '../ui/format.ts';
import { AppLink } from '../ui/links.tsx';
import { ErrorText, QueryState } from '../ui/status.tsx';
import { useWorkspace } from '../ui/workspace.tsx';
import { DraftFixPanel, IssueExplain } from './IssueExplain.tsx';
import { kindLabel } from './kinds.ts';
import { StackTrace } from './StackTrace.tsx';
import type { Issue, IssueSession, IssueStatus, LatestError } from './types.ts';
import './issues.css';

const SESSIONS_PAGE = 20;

/**
 * One issue: what it is, how often and where it happened, its status, its explanation and (for
 * errors) a draft of a fix.
 */
export function IssueDetail() {
  const { id = '' } = useParams();
  const { project } = useWorkspace();
  const issue = useQuery({
    queryKey: ['issue', project.id, id],
    queryFn: () => api<Issue>('GET', `/v1/issues/${encodeURIComponent(id)}`),
  });
  return (
    <article className="issues issue-detail" aria-busy={issue.isPending}>
      <p>
        <AppLink to="/issues">← All issues</AppLink>
      </p>
      <QueryState query={issue}>
        {(data) => (
          <>
            <h1>{data.title}</h1>
            <IssueStatusControls issue={data} />
            <IssueFacts issue={data} />
            {data.latestError === undefined ? null : <LatestErrorSection error={data.latestError} />}
            <IssueExplain issue={data} />
            {data.kind === 'error' ? <DraftFixPanel issue={data} /> : null}
            <IssueSessions issue={data} />
          </>
        )}
      </QueryState>
    </article>
  );
}

function IssueFacts({ issue }: { issue: Issue }) {
  return (
    <section aria-labelledby="issue-facts-title">
      <h2 id="issue-facts-title">Details</h2>
      <dl className="facts">
        <dt>Kind</dt>
        <dd>{kindLabel(issue.kind)}</dd>
        <dt>Severity</dt>
        <dd>
          <span className={`badge severity-${issue.severity}`}>{issue.severity}</span>
        </dd>
        <dt>Occurrences</dt>
        <dd>
          {issue.occurrences} in all, {issue.count24h} in the last 24 h
        </dd>
        <dt>Sessions</dt>
        <dd>{issue.sessions}</dd>
        <dt>First seen</dt>
        <dd>{formatDateTime(issue.firstSeenAt)}</dd>
        <dt>Last seen</dt>
        <dd>{formatDateTime(issue.lastSeenAt)}</dd>
        <dt>Releases</dt>
        <dd>
          {issue.releases.length === 0 ? (
            'none reported'
          ) : (
            <ul className="releases" aria-label="Releases">
              {issue.releases.map((release) => (
                <li key={release}>
                  <code>{release}</code>
                  {release === issue.lastRelease ? ' (latest)' : null}
                </li>
              ))}
            </ul>
          )}
        </dd>
        <dt>Fingerprint</dt>
        <dd>
          <code>{issue.fingerprint}</code>
        </dd>
      </dl>
    </section>
  );
}

/** The newest occurrence's error: where and when, and its stack (original frames once mapped). */
function LatestErrorSection({ error }: { error: LatestError }) {
  const mapped = error.frames?.some((frame) => frame.mapped) === true;
  return (
    <section aria-labelledby="latest-error-title" className="latest-error">
      <h2 id="latest-error-title">Latest error</h2>
      <p>
        <strong>
          {error.name}
          {error.message === undefined ? '' : `: ${error.message}`}
        </strong>{' '}
        at {formatDateTime(error.t)} in{' '}
        <AppLink to={`/sessions/${error.sessionId}`}>
          session <code>{error.sessionId}</code>
        </AppLink>
      </p>
      <p className="hint">
        {mapped
          ? 'Original frames from the uploaded source maps, top frame first.'
          : 'The stack as the browser printed it: no uploaded source map matched it when it was processed.'}
      </p>
      <StackTrace stack={error.stack} frames={error.frames} label="Frames of the latest error" />
    </section>
  );
}

const STATUS_WORDS: Record<IssueStatus, string> = {
  open: 'Open',
  resolved: 'Resolved',
  ignored: 'Ignored',
};

/**
 * The status, and the buttons that change it for people who may (`issues:write`: members,
 * admins, owners). Viewers see the status and why there are no buttons.
 */
function IssueStatusControls({ issue }: { issue: Issue }) {
  const { project, organization } = useWorkspace();
  const queryClient = useQueryClient();
  const [release, setRelease] = useState('');
  const canWrite = organization.role !== 'viewer';
  const change = useMutation({
    mutationFn: (status: IssueStatus) =>
      api<Issue>('PATCH', `/v1/issues/${issue.id}`, {
        status,
        ...(status === 'resolved' && release.trim() !== '' ? { resolvedInRelease: release.trim() } : {}),
      }),
    onSuccess: (changed) => {
      queryClient.setQueryData(['issue', project.id, issue.id], changed);
      // Dropped rather than marked stale: the list must not show the old status while it reloads.
      queryClient.removeQueries({ queryKey: ['issues', project.id] });
    },
  });
  return (
    <section aria-labelledby="issue-status-title" className="issue-status">
      <h2 id="issue-status-title">Status</h2>
      <div className="status-line">
        <p role="status" aria-live="polite">
          <span className={`badge status-${issue.status}`}>{STATUS_WORDS[issue.status]}</span>
          {issue.status === 'resolved' && issue.resolvedAt !== undefined
            ? ` since ${formatDateTime(issue.resolvedAt)}${issue.resolvedRelease === undefined ? '' : `, in release ${issue.resolvedRelease}`}: it reopens if it happens again${issue.resolvedRelease === undefined ? '' : ' (as a regression in a newer release)'}.`
            : null}
          {issue.status === 'ignored' ? ': counted, but it notifies no one.' : null}
        </p>
        {canWrite ? (
          <div className="actions">
            {issue.status === 'open' ? (
              <>
                <label>
                  Resolved in release (optional)
                  <input
                    value={release}
                    onChange={(event) => setRelease(event.target.value)}
                    placeholder={issue.lastRelease ?? 'the latest release it was seen in'}
                    maxLength={128}
                  />
                </label>
                <button type="button" disabled={change.isPending} onClick={() => change.mutate('resolved')}>
                  Resolve
                </button>
                <button type="button" disabled={change.isPending} onClick={() => change.mutate('ignored')}>
                  Ignore
                </button>
              </>
            ) : (
              <button type="button" disabled={change.isPending} onClick={() => change.mutate('open')}>
                Reopen
              </button>
            )}
          </div>
        ) : (
          <p className="hint">Viewers can read issues; resolving or ignoring one needs the member role.</p>
        )}
      </div>
      {change.error ? <ErrorText>{change.error.message}</ErrorText> : null}
    </section>
  );
}

/** The sessions the issue occurred in, most recent first, each a link to its replay. */
function IssueSessions({ issue }: { issue: Issue }) {
  const { project } = useWorkspace();
  const sessions = useInfiniteQuery({
    queryKey: ['issue-sessions', project.id, issue.id],
    initialPageParam: undefined as string | undefined,
    queryFn: ({ pageParam }) =>
      api<Page<IssueSession>>(
        'GET',
        `/v1/issues/${issue.id}/sessions?limit=${SESSIONS_PAGE}${pageParam === undefined ? '' : `&cursor=${encodeURIComponent(pageParam)}`}`,
      ),
    getNextPageParam: (last) => last.nextCursor,
  });
  const rows = sessions.data?.pages.flatMap((page) => page.items) ?? [];
  return (
    <section aria-labelledby="issue-sessions-title">
      <h2 id="issue-sessions-title">Affected sessions</h2>
      {sessions.error ? <ErrorText>{sessions.error.message}</ErrorText> : null}
      {sessions.isPending ? <p aria-busy="true">Loading…</p> : null}
      {sessions.isSuccess && rows.length === 0 ? <p>No session recorded it.</p> : null}
      {rows.length === 0 ? null : (
        <table>
          <thead>
            <tr>
              <th scope="col">Session</th>
              <th scope="col">Occurrences</th>
              <th scope="col">First</th>
              <th scope="col">Last</th>
              <th scope="col">Release</th>
              <th scope="col">Environment</th>
            </tr>
          </thead>
          <tbody>
            {rows.map((row) => (
              <tr key={row.sessionId} data-session-id={row.sessionId}>
                <td>
                  <AppLink to={`/sessions/${row.sessionId}`}>
                    <code>{row.sessionId}</code>
                  </AppLink>
                </td>
                <td>{row.occurrences}</td>
                <td>{formatDateTime(row.firstAt)}</td>
                <td>{formatDateTime(row.lastAt)}</td>
                <td>{row.release ?? '—'}</td>
                <td>{row.environment ?? '—'}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {sessions.hasNextPage ? (
        <button type="button" disabled={sessions.isFetchingNextPage} onClick={() => sessions.fetchNextPage()}>
          More sessions
        </button>
      ) : null}
    </section>
  );
}
