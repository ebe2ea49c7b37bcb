import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useSearchParams } from 'react-router';
import { api, type Page } from '../api.ts';
import { formatDateTime } from '../ui/format.ts';
import { ErrorText, QueryState } from '../ui/status.tsx';
import { useWorkspace } from '../ui/workspace.tsx';
import { useChannels } from './Channels.tsx';
import { NotificationsLayout, useCanChangeNotifications } from './NotificationsLayout.tsx';
import type { Delivery, DeliveryAttempt } from './types.ts';

/** While a delivery is pending, the list refreshes this often (ms). */
const PENDING_REFRESH_MS = 2000;

/**
 * Webhook deliveries, newest first, with every attempt (time, answer status, error, duration):
 * filters (`?status=&channel=&eventType=`) and the page (`cursor`) live in the URL. "Replay"
 * sends the same event again as a new delivery.
 */
export function Deliveries() {
  const { project } = useWorkspace();
  const channels = useChannels();
  const canChange = useCanChangeNotifications();
  const queryClient = useQueryClient();
  const [params, setParams] = useSearchParams();
  const status = params.get('status') ?? '';
  const channel = params.get('channel') ?? '';
  const eventType = params.get('eventType') ?? '';
  const cursor = params.get('cursor') ?? undefined;
  const query = new URLSearchParams({ limit: '50' });
  if (status !== '') query.set('status', status);
  if (channel !== '') query.set('channel', channel);
  if (eventType !== '') query.set('eventType', eventType);
  if (cursor !== undefined) query.set('cursor', cursor);
  const deliveries = useQuery({
    queryKey: ['deliveries', project.id, query.toString()],
    queryFn: () => api<Page<Delivery>>('GET', `/v1/notifications/deliveries?${query}`),
    refetchInterval: (current) =>
      current.state.data?.items.some((delivery) => delivery.status === 'pending')
        ? PENDING_REFRESH_MS
        : false,
  });
  const replay = useMutation({
    mutationFn: (id: string) => api<Delivery>('POST', `/v1/notifications/deliveries/${id}/replay`),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: ['deliveries', project.id] }),
  });
  const channelName = (id: string) => channels.data?.items.find((item) => item.id === id)?.name ?? id;

  function setParam(name: string, value: string | undefined) {
    const next = new URLSearchParams(params);
    if (value === undefined || value === '') next.delete(name);
    else next.set(name, value);
    if (name !== 'cursor') next.delete('cursor');
    setParams(next);
  }

  return (
    <NotificationsLayout title="Deliveries">
      <form className="filters" aria-label="Filter deliveries" onSubmit={(event) => event.preventDefault()}>
        <label>
          Status
          <select value={status} onChange={(event) => setParam('status', event.target.value)}>
            <option value="">Any status</option>
            <option value="pending">Pending</option>
            <option value="delivered">Delivered</option>
            <option value="failed">Failed</option>
          </select>
        </label>
        <label>
          Channel
          <select value={channel} onChange={(event) => setParam('channel', event.target.value)}>
            <option value="">Any channel</option>
            {channels.data?.items.map((item) => (
              <option key={item.id} value={item.id}>
                {item.name}
              </option>
            ))}
          </select>
        </label>
        <label>
          Event type
          <input
            value={eventType}
            onChange={(event) => setParam('eventType', event.target.value.trim())}
            placeholder="cluster.created"
          />
        </label>
        <button type="button" onClick={() => deliveries.refetch()}>
          Refresh
        </button>
      </form>
      {replay.error ? <ErrorText>{replay.error.message}</ErrorText> : null}
      <QueryState query={deliveries}>
        {(page) =>
          page.items.length === 0 ? (
            <p>No deliveries match.</p>
          ) : (
            <table>
              <thead>
                <tr>
                  <th scope="col">Created</th>
                  <th scope="col">Event</th>
                  <th scope="col">Channel</th>
                  <th scope="col">Status</th>
                  <th scope="col">Attempts</th>
                  {canChange ? <th scope="col">Actions</th> : null}
                </tr>
              </thead>
              <tbody>
                {page.items.map((delivery) => (
                  <tr key={delivery.id} data-delivery-id={delivery.id}>
                    <td>{formatDateTime(delivery.createdAt)}</td>
                    <td>
                      <code>{delivery.eventType}</code>
                      <div className="hint">
                        <code>{delivery.eventId}</code>
                        {delivery.replayOf === undefined ? null : (
                          <>
                            {' '}
                            · replay of <code>{delivery.replayOf}</code>
                          </>
                        )}
                      </div>
                    </td>
                    <td>{channelName(delivery.channelId)}</td>
                    <td>
                      <span className={`pill status-${delivery.status}`}>{delivery.status}</span>
                      {delivery.status === 'pending' && delivery.nextAttemptAt !== undefined ? (
                        <div className="hint">next attempt {formatDateTime(delivery.nextAttemptAt)}</div>
                      ) : null}
                    </td>
                    <td>
                      <Attempts attempts={delivery.attemptLog} />
                    </td>
                    {canChange ? (
                      <td>
                        <button
                          type="button"
                          disabled={replay.isPending}
                          onClick={() => replay.mutate(delivery.id)}
                          aria-label={`Replay delivery ${delivery.id}`}
                        >
                          Replay
                        </button>
                      </td>
                    ) : null}
                  </tr>
                ))}
              </tbody>
            </table>
          )
        }
      </QueryState>
      <nav aria-label="Pages of deliveries" className="pager">
        {cursor === undefined ? null : (
          <button type="button" onClick={() => setParam('cursor', undefined)}>
            First page
          </button>
        )}
        {deliveries.data?.nextCursor === undefined ? null : (
          <button type="button" onClick={() => setParam('cursor', deliveries.data?.nextCursor)}>
            Next page
          </button>
        )}
      </nav>
    </NotificationsLayout>
  );
}

function Attempts({ attempts }: { attempts: DeliveryAttempt[] }) {
  if (attempts.length === 0) return <span>none yet</span>;
  return (
    <ol className="attempts">
      {attempts.map((attempt) => (
        <li key={attempt.attempt}>
          <span className={`pill outcome-${attempt.outcome}`}>{attempt.outcome}</span>{' '}
          {attempt.statusCode === undefined ? 'no answer' : `HTTP ${attempt.statusCode}`} ·{' '}
          {attempt.durationMs} ms · {formatDateTime(attempt.startedAt)}
          {attempt.error === undefined ? null : <div className="error-detail">{attempt.error}</div>}
          {attempt.responseBody === undefined || attempt.responseBody === '' ? null : (
            <details>
              <summary>Response body</summary>
              <pre>{attempt.responseBody}</pre>
            </details>
          )}
        </li>
      ))}
    </ol>
  );
}
