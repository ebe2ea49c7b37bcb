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

// End users' privacy requests (servers/api/README.md, Privacy requests and retention): erasing an
// end user's data across the organization's projects, carried out by the server's privacy worker,
// each request with its receipt; and, once the API has them, requests for a copy of an end user's
// data. Admins and owners only, as the API.

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
  const members = useMembers(organization.id);
  const requests = useInfiniteQuery({
    queryKey: ['settings', 'erasure', organization.id],
    initialPageParam: undefined as string | undefined,
    queryFn: ({ pageParam }) =>
      api<Page<ErasureRequest>>(
        'GET',
        `/v1/orgs/${organization.id}/erasure${pageParam === undefined ? '' : `?cursor=${encodeURIComponent(pageParam)}`}`,
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
  const nameOf = (userId: string | null) => {
    if (userId === null) return '—';
    const member = members.data?.find((candidate) => candidate.userId === userId);
    return member === undefined ? 'A former member' : (member.name ?? member.email);
  };
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

/**
 * Requests for a copy of an end user's data (DSAR, `/v1/orgs/{orgId}/dsar`). The API is being added;
 * until then this section only says so. Its list goes here, beside the erasures.
 */
function DataExports() {
  return (
    <section className="settings-section" aria-labelledby="data-exports-title" data-testid="data-exports">
      <h2 id="data-exports-title">Data export requests</h2>
      <p>Requests for a copy of an end user's data will be listed here when this server offers them.</p>
    </section>
  );
}
