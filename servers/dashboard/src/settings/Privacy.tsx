import { useInfiniteQuery, useMutation, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useEffect, useId, useRef, useState } from 'react';
import { api, type Page } from '../api.ts';
import { formatDateTime } from '../ui/format.ts';
import { ErrorText, QueryState } from '../ui/status.tsx';
import { useWorkspace } from '../ui/workspace.tsx';
import { useMembers } from './Members.tsx';
import { describedBy, FieldProblem, fieldProblems, StatusText } from './parts.tsx';
import { administers } from './permissions.ts';
import { SettingsLayout } from './SettingsLayout.tsx';
import { formatByteSize } from './Usage.tsx';

// End users' privacy requests (servers/api/README.md, Privacy requests and retention): erasing an
// end user's data across the organization's projects, carried out by the server's privacy worker,
// each request with its receipt; and access requests (DSAR): a copy of an end user's data, gathered
// by the server's job and downloaded as a zip while it is ready. Admins and owners only, as the API.

/** `GET`/`POST /v1/orgs/{orgId}/erasure`. */
interface ErasureRequest {
  id: string;
  organizationId: string;
  status: 'queued' | 'running' | 'completed' | 'failed';
  /** Which identifiers were given (their values are not kept once it completes). */
  subject: { userId: boolean; email: boolean };
  sessionsErased: number;
  /** Rows removed per table, `blobs` queued and `blobs_removed` from the blob store. */
  receipt: Record<string, number>;
  error: string | null;
  requestedBy: string | null;
  createdAt: string;
  startedAt: string | null;
  finishedAt: string | null;
}

const STATUS_WORDS: Record<ErasureRequest['status'], string> = {
  queued: 'Queued',
  running: 'Running',
  completed: 'Completed',
  failed: 'Failed',
};

/** While a request is queued or running, the list is read again this often. */
const POLL_MS = 3_000;

/**
 * An organization's privacy requests of one kind (`/v1/orgs/{orgId}/erasure` or `/dsar`), newest
 * first, page after page, read again every {@link POLL_MS} while one is queued or running.
 */
function useRequests<Request extends { status: string }>(kind: 'erasure' | 'dsar', organizationId: string) {
  return useInfiniteQuery({
    queryKey: ['settings', kind, organizationId],
    initialPageParam: undefined as string | undefined,
    queryFn: ({ pageParam }) =>
      api<Page<Request>>(
        'GET',
        `/v1/orgs/${organizationId}/${kind}${pageParam === undefined ? '' : `?cursor=${encodeURIComponent(pageParam)}`}`,
      ),
    getNextPageParam: (last) => last.nextCursor,
    select: (data) => data.pages.flatMap((page) => page.items),
    refetchInterval: (query) =>
      query.state.data?.pages.some((page) =>
        page.items.some((item) => item.status === 'queued' || item.status === 'running'),
      )
        ? POLL_MS
        : false,
  });
}

/** `/settings/privacy` (admins and owners). */
export function PrivacyPage() {
  const { organization } = useWorkspace();
  return (
    <SettingsLayout title="Privacy">
      {administers(organization.role) ? (
        <>
          <p>
            Requests from the people your apps record. An erasure deletes, across every project of{' '}
            {organization.name}, each session of the user id or e-mail address your app gave{' '}
            <code>identify</code>, the other sessions of their visits, and everything derived from them. Usage
            stays as counts.
          </p>
          <RequestErasure />
          <ErasureList />
          <DataExports />
        </>
      ) : (
        <p className="settings-note" role="note">
          Privacy requests are for the organization's admins and owners.
        </p>
      )}
    </SettingsLayout>
  );
}

/** Who asked for a request, by the member's name (a person who left is "A former member"). */
function useMemberName(organizationId: string): (userId: string | null | undefined) => string {
  const members = useMembers(organizationId);
  return (userId) => {
    if (userId === null || userId === undefined) return '—';
    const member = members.data?.find((candidate) => candidate.userId === userId);
    return member === undefined ? 'A former member' : (member.name ?? member.email);
  };
}

/** The form: a user id and/or an e-mail address, then a confirmation (it cannot be undone). */
function RequestErasure() {
  const { organization } = useWorkspace();
  const queryClient = useQueryClient();
  const [userId, setUserId] = useState('');
  const [email, setEmail] = useState('');
  const [asking, setAsking] = useState(false);
  const [message, setMessage] = useState<string>();
  const confirm = useRef<HTMLButtonElement>(null);
  const hintId = useId();
  const problemId = useId();
  const request = useMutation({
    mutationFn: () =>
      api<ErasureRequest>('POST', `/v1/orgs/${organization.id}/erasure`, {
        ...(userId.trim() === '' ? {} : { userId: userId.trim() }),
        ...(email.trim() === '' ? {} : { email: email.trim() }),
      }),
    onMutate: () => setMessage(undefined),
    onSuccess: (created) => {
      setMessage(
        `Erasure requested (${created.id}): it is carried out in the background; its receipt is below.`,
      );
      setUserId('');
      setEmail('');
    },
    onSettled: () => queryClient.invalidateQueries({ queryKey: ['settings', 'erasure', organization.id] }),
  });
  // Keyboard users land on the question's answer.
  useEffect(() => {
    if (asking) confirm.current?.focus();
  }, [asking]);
  const problems = fieldProblems(request.error?.message);
  const general =
    request.error !== null && Object.keys(problems).length === 0 ? request.error.message : undefined;
  const subject = [
    userId.trim() === '' ? '' : `user id ${userId.trim()}`,
    email.trim() === '' ? '' : email.trim(),
  ]
    .filter((part) => part !== '')
    .join(' and ');
  function submit(event: FormEvent) {
    event.preventDefault();
    setAsking(true);
  }
  return (
    <section className="settings-section" aria-labelledby="erasure-request-title">
      <h2 id="erasure-request-title">Erase an end user's data</h2>
      <form onSubmit={submit} noValidate className="settings-form" aria-label="Request an erasure">
        <fieldset disabled={asking || request.isPending} className="settings-fieldset-plain">
          <div className="settings-grid">
            {(
              [
                ['userId', 'User id', userId, setUserId, 'text'],
                ['email', 'E-mail address', email, setEmail, 'email'],
              ] as const
            ).map(([field, label, value, set, type]) => (
              <div key={field} className="settings-field">
                <label>
                  {label}
                  <input
                    type={type}
                    value={value}
                    autoComplete="off"
                    onChange={(event) => set(event.target.value)}
                    {...describedBy(
                      problems[field] === undefined ? undefined : `${problemId}-${field}`,
                      hintId,
                    )}
                  />
                </label>
                {problems[field] === undefined ? null : (
                  <FieldProblem id={`${problemId}-${field}`} field={field}>
                    {problems[field]}
                  </FieldProblem>
                )}
              </div>
            ))}
          </div>
          <p className="hint" id={hintId}>
            What your app gave <code>identify</code>: either, or both (either matches; the e-mail address in
            any case).
          </p>
        </fieldset>
        {asking ? (
          <p className="settings-confirm">
            <span>
              Erase every session of {subject === '' ? 'this end user' : <strong>{subject}</strong>} in every
              project of {organization.name}? This cannot be undone.
            </span>
            <button
              ref={confirm}
              type="button"
              className="danger"
              onClick={() => {
                setAsking(false);
                request.mutate();
              }}
            >
              Yes, erase
            </button>
            <button type="button" onClick={() => setAsking(false)}>
              Cancel
            </button>
          </p>
        ) : (
          <div className="settings-actions">
            <button type="submit" className="danger" disabled={request.isPending}>
              Request erasure
            </button>
          </div>
        )}
        {general === undefined ? null : <ErrorText>{general}</ErrorText>}
        {Object.keys(problems).length === 0 ? null : (
          <ErrorText>Nothing was requested: see the fields marked.</ErrorText>
        )}
        {message === undefined ? null : <StatusText>{message}</StatusText>}
      </form>
    </section>
  );
}

/** The organization's erasure requests, newest first, read again while one is under way. */
function ErasureList() {
  const { organization } = useWorkspace();
  const nameOf = useMemberName(organization.id);
  const requests = useRequests<ErasureRequest>('erasure', organization.id);
  return (
    <section className="settings-section" aria-labelledby="erasure-list-title">
      <h2 id="erasure-list-title">Erasure requests</h2>
      <QueryState query={requests}>
        {(items) =>
          items.length === 0 ? (
            <p>No erasure has been requested.</p>
          ) : (
            <table data-testid="erasure-requests">
              <thead>
                <tr>
                  <th scope="col">Requested</th>
                  <th scope="col">By</th>
                  <th scope="col">Identified by</th>
                  <th scope="col">Status</th>
                  <th scope="col">Sessions erased</th>
                  <th scope="col">Receipt</th>
                </tr>
              </thead>
              <tbody>
                {items.map((item) => (
                  <tr key={item.id} data-erasure-id={item.id}>
                    <td>
                      <time dateTime={item.createdAt}>{formatDateTime(item.createdAt)}</time>
                    </td>
                    <td>{nameOf(item.requestedBy)}</td>
                    <td>
                      {[item.subject.userId ? 'user id' : '', item.subject.email ? 'e-mail address' : '']
                        .filter((part) => part !== '')
                        .join(' and ')}
                    </td>
                    <td data-testid="erasure-status">
                      {STATUS_WORDS[item.status]}
                      {item.finishedAt === null ? null : (
                        <span className="settings-hint">
                          {' '}
                          on <time dateTime={item.finishedAt}>{formatDateTime(item.finishedAt)}</time>
                        </span>
                      )}
                      {item.error === null ? null : <span className="error">: {item.error}</span>}
                    </td>
                    <td data-testid="erasure-sessions">{item.sessionsErased.toLocaleString()}</td>
                    <td>
                      <Receipt request={item} />
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          )
        }
      </QueryState>
      {requests.hasNextPage ? (
        <button type="button" onClick={() => requests.fetchNextPage()} disabled={requests.isFetchingNextPage}>
          Older requests
        </button>
      ) : null}
      <p className="settings-hint">
        The identifiers are kept only while the erasure runs; the receipt counts what was removed and names no
        one.
      </p>
    </section>
  );
}

/** The receipt's lines that are not rows of a table. */
const RECEIPT_WORDS: Record<string, [one: string, more: string]> = {
  blobs: ['stored file queued for removal', 'stored files queued for removal'],
  blobs_removed: ['stored file removed', 'stored files removed'],
};

/** What was removed: rows per table, and stored files (folded: a receipt has a line per table). */
function Receipt({ request }: { request: ErasureRequest }) {
  const entries = Object.entries(request.receipt).filter(([, count]) => count > 0);
  if (entries.length === 0) return <>{request.status === 'completed' ? 'Nothing to remove' : '—'}</>;
  return (
    <details className="settings-receipt">
      <summary>
        What was removed <span className="visually-hidden">by request {request.id}</span>
      </summary>
      <ul aria-label={`Receipt of ${request.id}`}>
        {entries.map(([table, count]) => (
          <li key={table} data-table={table}>
            {RECEIPT_WORDS[table] === undefined ? (
              <>
                <code>{table}</code>: {count.toLocaleString()} {count === 1 ? 'row' : 'rows'}
              </>
            ) : (
              `${count.toLocaleString()} ${RECEIPT_WORDS[table][count === 1 ? 0 : 1]}`
            )}
          </li>
        ))}
      </ul>
    </details>
  );
}

/** `GET`/`POST /v1/orgs/{orgId}/dsar`: an access request (servers/api README, Access requests). */
interface DataExportRequest {
  id: string;
  organizationId: string;
  status: 'queued' | 'running' | 'ready' | 'failed' | 'expired';
  /** Whom it is about; null once it expired or failed (the API forgets them). */
  subject: { userId?: string; email?: string } | null;
  requestedBy?: string;
  createdAt: string;
  startedAt?: string;
  readyAt?: string;
  /** When the archive stops being served. */
  expiresAt?: string;
  attempts: number;
  error?: string;
  /** What the archive holds, once gathered. */
  manifest?: {
    totals: {
      projects: number;
      sessions: number;
      chunks: number;
      bytes: number;
      calls: number;
      errors: number;
      customEvents: number;
    };
    projects: { projectId: string; name: string; sessions: number; calls: number }[];
  };
  /** While ready: the archive's route (a zip; the signed-in cookie is the credential). */
  downloadUrl?: string;
}

const EXPORT_STATUS_WORDS: Record<DataExportRequest['status'], string> = {
  queued: 'Queued',
  running: 'Gathering',
  ready: 'Ready',
  failed: 'Failed',
  expired: 'Expired',
};

/** The manifest's counts, in the order they are listed, with their words. */
const EXPORT_COUNTS: {
  key: keyof NonNullable<DataExportRequest['manifest']>['totals'];
  words: [one: string, more: string];
}[] = [
  { key: 'sessions', words: ['session', 'sessions'] },
  { key: 'chunks', words: ['chunk', 'chunks'] },
  { key: 'calls', words: ['call', 'calls'] },
  { key: 'errors', words: ['error', 'errors'] },
  { key: 'customEvents', words: ['custom event', 'custom events'] },
];

/** Access requests: the form asking for one, and the list with each archive's link while ready. */
function DataExports() {
  return (
    <section className="settings-section" aria-labelledby="data-exports-title" data-testid="data-exports">
      <h2 id="data-exports-title">Data export requests</h2>
      <p>
        A copy of everything your projects hold about one end user (their sessions with every chunk and event,
        errors, custom events and calls), as a zip to send them by your own channel. It is gathered in the
        background and can be downloaded, signed in, for 7 days.
      </p>
      <RequestDataExport />
      <DataExportList />
    </section>
  );
}

/** The form: a user id and/or an e-mail address (nothing is changed, so nothing to confirm). */
function RequestDataExport() {
  const { organization } = useWorkspace();
  const queryClient = useQueryClient();
  const [userId, setUserId] = useState('');
  const [email, setEmail] = useState('');
  const [message, setMessage] = useState<string>();
  const hintId = useId();
  const problemId = useId();
  const request = useMutation({
    mutationFn: () =>
      api<DataExportRequest>('POST', `/v1/orgs/${organization.id}/dsar`, {
        ...(userId.trim() === '' ? {} : { userId: userId.trim() }),
        ...(email.trim() === '' ? {} : { email: email.trim() }),
      }),
    onMutate: () => setMessage(undefined),
    onSuccess: (created) => {
      setMessage(`Export requested (${created.id}): it is gathered in the background and listed below.`);
      setUserId('');
      setEmail('');
    },
    onSettled: () => queryClient.invalidateQueries({ queryKey: ['settings', 'dsar', organization.id] }),
  });
  const problems = fieldProblems(request.error?.message);
  const general =
    request.error !== null && Object.keys(problems).length === 0 ? request.error.message : undefined;
  function submit(event: FormEvent) {
    event.preventDefault();
    request.mutate();
  }
  return (
    <form onSubmit={submit} noValidate className="settings-form" aria-label="Request a data export">
      <fieldset disabled={request.isPending} className="settings-fieldset-plain">
        <div className="settings-grid">
          {(
            [
              ['userId', 'User id', userId, setUserId, 'text'],
              ['email', 'E-mail address', email, setEmail, 'email'],
            ] as const
          ).map(([field, label, value, set, type]) => (
            <div key={field} className="settings-field">
              <label>
                {label}
                <input
                  type={type}
                  value={value}
                  autoComplete="off"
                  onChange={(event) => set(event.target.value)}
                  {...describedBy(
                    problems[field] === undefined ? undefined : `${problemId}-${field}`,
                    hintId,
                  )}
                />
              </label>
              {problems[field] === undefined ? null : (
                <FieldProblem id={`${problemId}-${field}`} field={field}>
                  {problems[field]}
                </FieldProblem>
              )}
            </div>
          ))}
        </div>
        <p className="hint" id={hintId}>
          What your app gave <code>identify</code>: either, or both (either matches; the e-mail address in any
          case).
        </p>
      </fieldset>
      <div className="settings-actions">
        <button type="submit" disabled={request.isPending}>
          Request export
        </button>
      </div>
      {general === undefined ? null : <ErrorText>{general}</ErrorText>}
      {Object.keys(problems).length === 0 ? null : (
        <ErrorText>Nothing was requested: see the fields marked.</ErrorText>
      )}
      {message === undefined ? null : <StatusText>{message}</StatusText>}
    </form>
  );
}

/** The organization's access requests, newest first, read again while one is being gathered. */
function DataExportList() {
  const { organization } = useWorkspace();
  const nameOf = useMemberName(organization.id);
  const requests = useRequests<DataExportRequest>('dsar', organization.id);
  return (
    <>
      <h3 className="settings-subheading">Requested exports</h3>
      <QueryState query={requests}>
        {(items) =>
          items.length === 0 ? (
            <p>No data export has been requested.</p>
          ) : (
            <div className="settings-scroll">
              <table data-testid="dsar-requests">
                <thead>
                  <tr>
                    <th scope="col">Requested</th>
                    <th scope="col">By</th>
                    <th scope="col">About</th>
                    <th scope="col">Status</th>
                    <th scope="col">Contents</th>
                    <th scope="col">Expires</th>
                    <th scope="col">Archive</th>
                  </tr>
                </thead>
                <tbody>
                  {items.map((item) => (
                    <tr key={item.id} data-dsar-id={item.id}>
                      <td>
                        <time dateTime={item.createdAt}>{formatDateTime(item.createdAt)}</time>
                      </td>
                      <td>{nameOf(item.requestedBy)}</td>
                      <td data-testid="dsar-subject">
                        {item.subject === null ? (
                          <span className="settings-hint">No longer kept</span>
                        ) : (
                          [item.subject.userId, item.subject.email]
                            .filter((part) => part !== undefined)
                            .join(', ')
                        )}
                      </td>
                      <td data-testid="dsar-status">
                        {EXPORT_STATUS_WORDS[item.status]}
                        {item.readyAt === undefined || item.status !== 'ready' ? null : (
                          <span className="settings-hint">
                            {' '}
                            on <time dateTime={item.readyAt}>{formatDateTime(item.readyAt)}</time>
                          </span>
                        )}
                        {item.error === undefined ? null : <span className="error">: {item.error}</span>}
                      </td>
                      <td>
                        <ExportContents request={item} />
                      </td>
                      <td data-testid="dsar-expires">
                        {item.expiresAt === undefined ? (
                          '—'
                        ) : (
                          <time dateTime={item.expiresAt}>{formatDateTime(item.expiresAt)}</time>
                        )}
                      </td>
                      <td>
                        {item.downloadUrl === undefined ? (
                          '—'
                        ) : (
                          <a href={item.downloadUrl} download>
                            Download archive <span className="visually-hidden">of request {item.id}</span>
                          </a>
                        )}
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          )
        }
      </QueryState>
      {requests.hasNextPage ? (
        <button type="button" onClick={() => requests.fetchNextPage()} disabled={requests.isFetchingNextPage}>
          Older exports
        </button>
      ) : null}
      <p className="settings-hint">
        The archive is built from what is stored when it is downloaded, and each download is audited. Once a
        request expires or fails, whom it was about is no longer kept; its counts stay.
      </p>
    </>
  );
}

/** The manifest's totals, once gathered: what the archive holds. */
function ExportContents({ request }: { request: DataExportRequest }) {
  if (request.manifest === undefined) return <>—</>;
  const { totals } = request.manifest;
  return (
    <ul className="settings-counts" aria-label={`Contents of ${request.id}`}>
      {EXPORT_COUNTS.map(({ key, words }) => (
        <li key={key} data-count={key}>
          {totals[key].toLocaleString()} {words[totals[key] === 1 ? 0 : 1]}
        </li>
      ))}
      <li data-count="bytes">{formatByteSize(totals.bytes)} of recording</li>
    </ul>
  );
}
