import { startRegistration } from '@simplewebauthn/browser';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { api } from '../api.ts';
import { formatDateTime } from '../ui/format.ts';
import { ErrorText, QueryState } from '../ui/status.tsx';
import { ConfirmButton, StatusText } from './parts.tsx';

/** A passkey as `GET /v1/me/passkeys` lists it (servers/api/README.md, Passkeys). */
interface Passkey {
  id: string;
  name: string;
  createdAt: string;
  lastUsedAt?: string;
  deviceType: 'singleDevice' | 'multiDevice';
  backedUp: boolean;
  transports: string[];
}

/** Why the browser's passkey dialog failed, in words (the person cancelling is the usual one). */
function ceremonyFailure(failure: unknown): Error {
  if (failure instanceof Error && failure.name === 'NotAllowedError')
    return new Error('No passkey was made: the request was cancelled or timed out.');
  return failure instanceof Error ? failure : new Error(String(failure));
}

/**
 * The person's passkeys: add one (with the password, or within 10 minutes of signing in; the
 * browser and the authenticator do the rest), rename one, remove one.
 */
export function Passkeys() {
  const queryClient = useQueryClient();
  const key = ['settings', 'my-passkeys'];
  const passkeys = useQuery({
    queryKey: key,
    queryFn: () => api<{ items: Passkey[] }>('GET', '/v1/me/passkeys'),
  });
  const [password, setPassword] = useState('');
  const [name, setName] = useState('');
  const [renaming, setRenaming] = useState<{ id: string; name: string } | undefined>();
  const [message, setMessage] = useState<string | undefined>();
  const refresh = () => queryClient.invalidateQueries({ queryKey: key });
  const add = useMutation({
    mutationFn: async () => {
      const optionsJSON = await api<Parameters<typeof startRegistration>[0]['optionsJSON']>(
        'POST',
        '/v1/me/passkeys/registration/options',
        password === '' ? {} : { password },
      );
      const response = await startRegistration({ optionsJSON }).catch((failure: unknown) => {
        throw ceremonyFailure(failure);
      });
      return api<Passkey>('POST', '/v1/me/passkeys/registration/verify', {
        response,
        ...(name.trim() === '' ? {} : { name: name.trim() }),
      });
    },
    onSuccess: (passkey) => {
      setPassword('');
      setName('');
      setMessage(`Passkey "${passkey.name}" added: you can sign in with it.`);
    },
    onSettled: refresh,
  });
  const rename = useMutation({
    mutationFn: (target: { id: string; name: string }) =>
      api<Passkey>('PATCH', `/v1/me/passkeys/${target.id}`, { name: target.name }),
    onSuccess: (passkey) => {
      setRenaming(undefined);
      setMessage(`Renamed to "${passkey.name}".`);
    },
    onSettled: refresh,
  });
  const remove = useMutation({
    mutationFn: (passkey: Passkey) => api<void>('DELETE', `/v1/me/passkeys/${passkey.id}`),
    onSuccess: (_answer, passkey) => setMessage(`Passkey "${passkey.name}" removed.`),
    onSettled: refresh,
  });
  const error = add.error ?? rename.error ?? remove.error;

  function submit(event: FormEvent) {
    event.preventDefault();
    setMessage(undefined);
    add.mutate();
  }

  return (
    <section className="settings-section" aria-labelledby="passkeys-title">
      <h2 id="passkeys-title">Passkeys</h2>
      <p>
        A passkey signs you in with your device's screen lock or a security key, without a password or a code.
      </p>
      {error ? <ErrorText>{error.message}</ErrorText> : null}
      {message === undefined ? null : <StatusText>{message}</StatusText>}
      <QueryState query={passkeys}>
        {(data) =>
          data.items.length === 0 ? (
            <p>You have no passkey yet.</p>
          ) : (
            <table aria-label="Your passkeys">
              <thead>
                <tr>
                  <th scope="col">Name</th>
                  <th scope="col">Added</th>
                  <th scope="col">Last used</th>
                  <th scope="col">Synced</th>
                  <th scope="col">Actions</th>
                </tr>
              </thead>
              <tbody>
                {data.items.map((passkey) => (
                  <tr key={passkey.id} data-passkey-id={passkey.id}>
                    <td>
                      {renaming?.id === passkey.id ? (
                        <form
                          className="settings-row"
                          aria-label={`Rename ${passkey.name}`}
                          onSubmit={(event) => {
                            event.preventDefault();
                            rename.mutate(renaming);
                          }}
                        >
                          <label>
                            <span className="visually-hidden">New name of {passkey.name}</span>
                            <input
                              value={renaming.name}
                              maxLength={100}
                              onChange={(event) => setRenaming({ id: passkey.id, name: event.target.value })}
                            />
                          </label>
                          <button type="submit" disabled={rename.isPending}>
                            Save
                          </button>
                          <button type="button" onClick={() => setRenaming(undefined)}>
                            Cancel
                          </button>
                        </form>
                      ) : (
                        passkey.name
                      )}
                    </td>
                    <td>{formatDateTime(passkey.createdAt)}</td>
                    <td>{passkey.lastUsedAt === undefined ? 'Never' : formatDateTime(passkey.lastUsedAt)}</td>
                    <td>{passkey.deviceType === 'multiDevice' ? 'Yes' : 'No, this device only'}</td>
                    <td>
                      <button
                        type="button"
                        onClick={() => setRenaming({ id: passkey.id, name: passkey.name })}
                      >
                        Rename <span className="visually-hidden">{passkey.name}</span>
                      </button>{' '}
                      <ConfirmButton
                        label={`Remove ${passkey.name}`}
                        confirmLabel="Yes, remove it"
                        question={`Remove the passkey "${passkey.name}"? It will no longer sign you in.`}
                        onConfirm={() => remove.mutate(passkey)}
                        pending={remove.isPending}
                      />
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          )
        }
      </QueryState>
      <form onSubmit={submit} noValidate className="settings-form" aria-label="Add a passkey">
        <label>
          Name of the new passkey (optional)
          <input
            value={name}
            maxLength={100}
            placeholder="Work laptop"
            onChange={(event) => setName(event.target.value)}
          />
        </label>
        <label>
          Your password (not needed within 10 minutes of signing in)
          <input
            type="password"
            autoComplete="current-password"
            value={password}
            onChange={(event) => setPassword(event.target.value)}
          />
        </label>
        <div className="settings-actions">
          <button type="submit" className="primary" disabled={add.isPending}>
            Add a passkey
          </button>
        </div>
      </form>
    </section>
  );
}
