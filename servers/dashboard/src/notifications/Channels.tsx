import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { api, type Page } from '../api.ts';
import { formatDateTime } from '../ui/format.ts';
import { AppLink } from '../ui/links.tsx';
import { ErrorText, QueryState } from '../ui/status.tsx';
import { useWorkspace } from '../ui/workspace.tsx';
import { NotificationsLayout, useCanChangeNotifications } from './NotificationsLayout.tsx';
import { SecretPanel } from './SecretPanel.tsx';
import type { Channel, ChannelWithSecret } from './types.ts';

/** The project's channels (`['channels', projectId]`), shared by the rules and deliveries pages. */
export function useChannels() {
  const { project } = useWorkspace();
  return useQuery({
    queryKey: ['channels', project.id],
    queryFn: () => api<Page<Channel>>('GET', '/v1/notifications/channels'),
  });
}

/** Webhook channels: create one (its secret shown once), test, rotate, disable, delete. */
export function Channels() {
  const channels = useChannels();
  const canChange = useCanChangeNotifications();
  const [shown, setShown] = useState<{ name: string; secret: string; rotated: boolean }>();
  return (
    <NotificationsLayout title="Channels">
      <p className="hint">
        A channel is where notifications go: a webhook receives each one as a signed JSON <code>POST</code>.
        Rules choose which events go to which channels.
      </p>
      {shown === undefined ? null : (
        <SecretPanel
          channelName={shown.name}
          secret={shown.secret}
          rotated={shown.rotated}
          onDone={() => setShown(undefined)}
        />
      )}
      <QueryState query={channels}>
        {(page) =>
          page.items.length === 0 ? (
            <p>No channel yet.</p>
          ) : (
            <table>
              <thead>
                <tr>
                  <th scope="col">Name</th>
                  <th scope="col">URL</th>
                  <th scope="col">State</th>
                  <th scope="col">Created</th>
                  {canChange ? <th scope="col">Actions</th> : null}
                </tr>
              </thead>
              <tbody>
                {page.items.map((channel) => (
                  <ChannelRow
                    key={channel.id}
                    channel={channel}
                    canChange={canChange}
                    onSecret={(secret) => setShown({ name: channel.name, secret, rotated: true })}
                  />
                ))}
              </tbody>
            </table>
          )
        }
      </QueryState>
      {canChange ? (
        <NewChannel
          onCreated={(created) =>
            setShown({ name: created.channel.name, secret: created.secret, rotated: false })
          }
        />
      ) : (
        <p className="hint">Viewers can see channels; adding or changing one needs the member role.</p>
      )}
    </NotificationsLayout>
  );
}

function NewChannel({ onCreated }: { onCreated: (created: ChannelWithSecret) => void }) {
  const { project } = useWorkspace();
  const queryClient = useQueryClient();
  const [name, setName] = useState('');
  const [url, setUrl] = useState('');
  const create = useMutation({
    mutationFn: () =>
      api<ChannelWithSecret>('POST', '/v1/notifications/channels', { type: 'webhook', name, url }),
    onSuccess: (created) => {
      setName('');
      setUrl('');
      onCreated(created);
      void queryClient.invalidateQueries({ queryKey: ['channels', project.id] });
    },
  });
  function submit(event: FormEvent) {
    event.preventDefault();
    create.mutate();
  }
  return (
    <form className="panel" aria-labelledby="new-channel-title" onSubmit={submit}>
      <h2 id="new-channel-title">New webhook channel</h2>
      <label>
        Name
        <input value={name} onChange={(event) => setName(event.target.value)} required maxLength={128} />
      </label>
      <label>
        Webhook URL
        <input
          type="url"
          value={url}
          onChange={(event) => setUrl(event.target.value)}
          required
          maxLength={2048}
          placeholder="https://hooks.example.com/svc"
        />
      </label>
      {create.error ? <ErrorText>{create.error.message}</ErrorText> : null}
      <p>
        <button type="submit" disabled={create.isPending}>
          Create channel
        </button>
      </p>
    </form>
  );
}

function ChannelRow({
  channel,
  canChange,
  onSecret,
}: {
  channel: Channel;
  canChange: boolean;
  onSecret: (secret: string) => void;
}) {
  const { project } = useWorkspace();
  const queryClient = useQueryClient();
  const [confirming, setConfirming] = useState<'delete' | 'rotate'>();
  const [message, setMessage] = useState<{ text: string; deliveryId?: string }>();
  const refresh = () => queryClient.invalidateQueries({ queryKey: ['channels', project.id] });
  const test = useMutation({
    mutationFn: () =>
      api<{ eventId: string; deliveryId: string }>('POST', `/v1/notifications/channels/${channel.id}/test`),
    onSuccess: (queued) => {
      setMessage({ text: 'Test event queued.', deliveryId: queued.deliveryId });
      void queryClient.invalidateQueries({ queryKey: ['deliveries', project.id] });
    },
  });
  const toggle = useMutation({
    mutationFn: () =>
      api<Channel>('PATCH', `/v1/notifications/channels/${channel.id}`, { enabled: !channel.enabled }),
    onSuccess: refresh,
  });
  const rotate = useMutation({
    mutationFn: () =>
      api<ChannelWithSecret>('POST', `/v1/notifications/channels/${channel.id}/rotate-secret`),
    onSuccess: (rotated) => {
      setConfirming(undefined);
      onSecret(rotated.secret);
      void refresh();
    },
  });
  const remove = useMutation({
    mutationFn: () => api<void>('DELETE', `/v1/notifications/channels/${channel.id}`),
    onSuccess: () => {
      void refresh();
      void queryClient.invalidateQueries({ queryKey: ['rules', project.id] });
    },
  });
  const error = test.error ?? toggle.error ?? rotate.error ?? remove.error;
  return (
    <tr data-channel-id={channel.id}>
      <th scope="row">{channel.name}</th>
      <td>
        <code>{channel.url}</code>
      </td>
      <td>
        {channel.enabled ? 'Enabled' : 'Disabled'}
        {channel.previousSecretExpiresAt === undefined ? null : (
          <div className="hint">
            Previous secret signs too until {formatDateTime(channel.previousSecretExpiresAt)}
          </div>
        )}
      </td>
      <td>{formatDateTime(channel.createdAt)}</td>
      {canChange ? (
        <td>
          <div className="row-actions">
            <button type="button" disabled={test.isPending} onClick={() => test.mutate()}>
              Send test
            </button>
            <button type="button" disabled={toggle.isPending} onClick={() => toggle.mutate()}>
              {channel.enabled ? 'Disable' : 'Enable'}
            </button>
            <button type="button" onClick={() => setConfirming('rotate')}>
              Rotate secret
            </button>
            <button type="button" onClick={() => setConfirming('delete')}>
              Delete
            </button>
          </div>
          {confirming === 'rotate' ? (
            <div className="confirm">
              A new secret signs from now on; the current one keeps signing too for 24 hours.{' '}
              <button type="button" disabled={rotate.isPending} onClick={() => rotate.mutate()}>
                Rotate now
              </button>{' '}
              <button type="button" onClick={() => setConfirming(undefined)}>
                Cancel
              </button>
            </div>
          ) : null}
          {confirming === 'delete' ? (
            <div className="confirm">
              Its pending deliveries fail and rules stop sending to it.{' '}
              <button type="button" disabled={remove.isPending} onClick={() => remove.mutate()}>
                Delete channel
              </button>{' '}
              <button type="button" onClick={() => setConfirming(undefined)}>
                Cancel
              </button>
            </div>
          ) : null}
          <div role="status">
            {message === undefined ? null : (
              <>
                {message.text}{' '}
                {message.deliveryId === undefined ? null : (
                  <AppLink to={`/notifications/deliveries?channel=${channel.id}`}>See its delivery</AppLink>
                )}
              </>
            )}
          </div>
          {error ? <ErrorText>{error.message}</ErrorText> : null}
        </td>
      ) : null}
    </tr>
  );
}
