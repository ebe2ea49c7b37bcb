import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { api } from '../../api.ts';
import { formatDateTime } from '../../ui/format.ts';
import { ErrorText, QueryState } from '../../ui/status.tsx';

// The person's linked Google, Microsoft and GitHub identities in their profile, each with Unlink
// (the server refuses the last way into an account without a password of its own).

interface LinkedIdentity {
  id: string;
  provider: 'google' | 'microsoft' | 'github';
  email?: string;
  createdAt: string;
  lastUsedAt?: string;
}

const PROVIDER_NAMES: Record<LinkedIdentity['provider'], string> = {
  google: 'Google',
  microsoft: 'Microsoft',
  github: 'GitHub',
};

export function LinkedIdentities() {
  const queryClient = useQueryClient();
  const key = ['settings', 'my-identities'];
  const identities = useQuery({
    queryKey: key,
    queryFn: () => api<{ items: LinkedIdentity[] }>('GET', '/v1/me/identities'),
  });
  const [message, setMessage] = useState<string | undefined>();
  const unlink = useMutation({
    mutationFn: (identity: LinkedIdentity) => api<void>('DELETE', `/v1/me/identities/${identity.id}`),
    onSuccess: (_nothing, identity) =>
      setMessage(`Your ${PROVIDER_NAMES[identity.provider]} account is unlinked.`),
    onSettled: () => queryClient.invalidateQueries({ queryKey: key }),
  });
  return (
    <section className="settings-section" aria-labelledby="identities-title">
      <h2 id="identities-title">Linked accounts</h2>
      {unlink.error ? <ErrorText>{unlink.error.message}</ErrorText> : null}
      {message === undefined ? null : <p role="status">{message}</p>}
      <QueryState query={identities}>
        {(data) =>
          data.items.length === 0 ? (
            <p className="hint">
              No Google, Microsoft or GitHub account is linked. Signing in with one whose verified address is
              yours links it.
            </p>
          ) : (
            <table>
              <thead>
                <tr>
                  <th scope="col">Provider</th>
                  <th scope="col">E-mail address</th>
                  <th scope="col">Linked</th>
                  <th scope="col">Last used</th>
                  <th scope="col">Actions</th>
                </tr>
              </thead>
              <tbody>
                {data.items.map((identity) => (
                  <tr key={identity.id} data-identity-id={identity.id}>
                    <td>{PROVIDER_NAMES[identity.provider]}</td>
                    <td>{identity.email ?? '—'}</td>
                    <td>{formatDateTime(identity.createdAt)}</td>
                    <td>{identity.lastUsedAt === undefined ? '—' : formatDateTime(identity.lastUsedAt)}</td>
                    <td>
                      <button
                        type="button"
                        onClick={() => unlink.mutate(identity)}
                        disabled={unlink.isPending}
                      >
                        Unlink <span className="visually-hidden">{PROVIDER_NAMES[identity.provider]}</span>
                      </button>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          )
        }
      </QueryState>
    </section>
  );
}
