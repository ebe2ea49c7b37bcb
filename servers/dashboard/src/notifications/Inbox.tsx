import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useSearchParams } from 'react-router';
import { api, type Page } from '../api.ts';
import { formatDateTime } from '../ui/format.ts';
import { AppLink } from '../ui/links.tsx';
import { ErrorText, QueryState } from '../ui/status.tsx';
import { useWorkspace } from '../ui/workspace.tsx';
import { NotificationsLayout, useCanChangeNotifications } from './NotificationsLayout.tsx';
import type { InboxItem } from './types.ts';

/** The path of an app link the server built (`{SVC_APP_URL}/sessions/…`), to open it in the app. */
function appPath(link: unknown): string | undefined {
  if (typeof link !== 'string' || !URL.canParse(link)) return undefined;
  const url = new URL(link);
  return `${url.pathname}${url.search}`;
}

/**
 * The project's notifications, newest first: by default those nobody acknowledged yet (an
 * inbox to empty), `?show=all` for every one.
 */
export function Inbox() {
  const { project } = useWorkspace();
  const canChange = useCanChangeNotifications();
  const queryClient = useQueryClient();
  const [params, setParams] = useSearchParams();
  const showAll = params.get('show') === 'all';
  const cursor = params.get('cursor') ?? undefined;
  const query = new URLSearchParams({ limit: '50' });
  if (!showAll) query.set('acked', 'false');
  if (cursor !== undefined) query.set('cursor', cursor);
  const inbox = useQuery({
    queryKey: ['inbox', project.id, query.toString()],
    queryFn: () => api<Page<InboxItem>>('GET', `/v1/inbox?${query}`),
  });
  const acknowledge = useMutation({
    mutationFn: (id: string) => api<InboxItem>('POST', `/v1/inbox/${id}/ack`),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: ['inbox', project.id] }),
  });

  function setParam(name: string, value: string | undefined) {
    const next = new URLSearchParams(params);
    if (value === undefined) next.delete(name);
    else next.set(name, value);
    if (name !== 'cursor') next.delete('cursor');
    setParams(next);
  }

  return (
    <NotificationsLayout title="Inbox">
      <fieldset className="inline-choice">
        <legend>Show</legend>
        <label>
          <input type="radio" name="show" checked={!showAll} onChange={() => setParam('show', undefined)} />
          Not acknowledged
        </label>
        <label>
          <input type="radio" name="show" checked={showAll} onChange={() => setParam('show', 'all')} />
          All
        </label>
      </fieldset>
      {acknowledge.error ? <ErrorText>{acknowledge.error.message}</ErrorText> : null}
      <QueryState query={inbox}>
        {(page) =>
          page.items.length === 0 ? (
            <p>{showAll ? 'No notifications yet.' : 'Nothing to acknowledge: the inbox is empty.'}</p>
          ) : (
            <ul className="inbox" aria-label="Notifications">
              {page.items.map((item) => {
                const links = (item.data.links ?? {}) as Record<string, unknown>;
                const replay = appPath(links.replay);
                return (
                  <li key={item.id} className="inbox-item" data-event-id={item.id}>
                    <article aria-labelledby={`inbox-${item.id}`}>
                      <h2 id={`inbox-${item.id}`}>{item.title}</h2>
                      <p className="meta">
                        <span className={`pill severity-${item.severity}`}>{item.severity}</span>{' '}
                        <code>{item.type}</code> · {formatDateTime(item.createdAt)}
                        {item.ackedAt === undefined
                          ? null
                          : ` · acknowledged ${formatDateTime(item.ackedAt)}`}
                      </p>
                      {item.summary === '' ? null : <p>{item.summary}</p>}
                      <p className="links">
                        {item.clusterId === undefined ? null : (
                          <AppLink to={`/issues/${item.clusterId}`}>Open the issue</AppLink>
                        )}
                        {replay === undefined ? null : <AppLink to={replay}>Watch the replay</AppLink>}
                        {canChange && item.ackedAt === undefined ? (
                          <button
                            type="button"
                            disabled={acknowledge.isPending}
                            onClick={() => acknowledge.mutate(item.id)}
                            aria-label={`Acknowledge “${item.title}”`}
                          >
                            Acknowledge
                          </button>
                        ) : null}
                      </p>
                    </article>
                  </li>
                );
              })}
            </ul>
          )
        }
      </QueryState>
      <nav aria-label="Pages of notifications" className="pager">
        {cursor === undefined ? null : (
          <button type="button" onClick={() => setParam('cursor', undefined)}>
            First page
          </button>
        )}
        {inbox.data?.nextCursor === undefined ? null : (
          <button type="button" onClick={() => setParam('cursor', inbox.data?.nextCursor)}>
            Next page
          </button>
        )}
      </nav>
    </NotificationsLayout>
  );
}
