import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { api } from '../api.ts';
import { formatDateTime } from '../ui/format.ts';
import { ErrorText, QueryState } from '../ui/status.tsx';
import { useWorkspace } from '../ui/workspace.tsx';
import { ConfirmButton, CopyButton, StatusText } from './parts.tsx';
import { administers } from './permissions.ts';
import { SettingsLayout } from './SettingsLayout.tsx';

/** A claimed domain, as `/v1/orgs/{orgId}/domains` answers it. */
interface ClaimedDomain {
  id: string;
  domain: string;
  txtRecord: { name: string; value: string };
  verifiedAt: string | null;
  lastCheckedAt: string | null;
  lastCheckError: string | null;
  createdAt: string;
}

/**
 * The organization's domains (admins and owners): claim one, publish the TXT record shown, verify
 * it. A verified domain lets its people find the organization's SSO and join it.
 */
export function DomainsPage() {
  const { organization } = useWorkspace();
  return (
    <SettingsLayout title="Domains">
      {administers(organization.role) ? (
        <Domains />
      ) : (
        <p className="settings-note" role="note">
          Domains are managed by the organization's admins and owners.
        </p>
      )}
    </SettingsLayout>
  );
}

function Domains() {
  const { organization } = useWorkspace();
  const queryClient = useQueryClient();
  const key = ['settings', 'domains', organization.id];
  const domains = useQuery({
    queryKey: key,
    queryFn: () => api<{ items: ClaimedDomain[] }>('GET', `/v1/orgs/${organization.id}/domains`),
  });
  const [message, setMessage] = useState<string | undefined>();
  const refresh = () => queryClient.invalidateQueries({ queryKey: key });
  const verify = useMutation({
    mutationFn: (domain: ClaimedDomain) =>
      api<ClaimedDomain>('POST', `/v1/orgs/${organization.id}/domains/${domain.id}/verify`),
    onMutate: () => setMessage(undefined),
    onSuccess: (domain) => setMessage(`${domain.domain} is verified.`),
    onSettled: refresh,
  });
  const remove = useMutation({
    mutationFn: (domain: ClaimedDomain) =>
      api<void>('DELETE', `/v1/orgs/${organization.id}/domains/${domain.id}`),
    onMutate: () => setMessage(undefined),
    onSuccess: (_, domain) => setMessage(`${domain.domain} was removed.`),
    onSettled: refresh,
  });
  return (
    <>
      <ClaimDomain
        onClaimed={(domain) => {
          setMessage(`${domain.domain} is claimed: publish its TXT record, then verify it.`);
          return refresh();
        }}
      />
      <section className="settings-section" aria-labelledby="domains-title">
        <h2 id="domains-title">Claimed domains</h2>
        {verify.error ? <ErrorText>{verify.error.message}</ErrorText> : null}
        {remove.error ? <ErrorText>{remove.error.message}</ErrorText> : null}
        {message === undefined ? null : <StatusText>{message}</StatusText>}
        <QueryState query={domains}>
          {(data) =>
            data.items.length === 0 ? (
              <p>No domains yet.</p>
            ) : (
              <ul className="settings-list" aria-label="Claimed domains">
                {data.items.map((domain) => (
                  <li key={domain.id} aria-label={domain.domain}>
                    <h3>{domain.domain}</h3>
                    <p>
                      {domain.verifiedAt === null ? (
                        <strong>Not verified</strong>
                      ) : (
                        <strong>Verified {formatDateTime(domain.verifiedAt)}</strong>
                      )}
                      {domain.lastCheckedAt === null
                        ? ''
                        : ` · last checked ${formatDateTime(domain.lastCheckedAt)}`}
                    </p>
                    {domain.verifiedAt === null && domain.lastCheckError !== null ? (
                      <p>Last lookup: {domain.lastCheckError}</p>
                    ) : null}
                    <dl className="settings-grid">
                      <dt>TXT record name</dt>
                      <dd className="settings-row">
                        <code>{domain.txtRecord.name}</code>
                        <CopyButton
                          text={domain.txtRecord.name}
                          label={`Copy the record name of ${domain.domain}`}
                        />
                      </dd>
                      <dt>TXT record value</dt>
                      <dd className="settings-row">
                        <code data-testid="txt-value">{domain.txtRecord.value}</code>
                        <CopyButton
                          text={domain.txtRecord.value}
                          label={`Copy the record value of ${domain.domain}`}
                        />
                      </dd>
                    </dl>
                    <div className="settings-actions">
                      <button
                        type="button"
                        className={domain.verifiedAt === null ? 'primary' : undefined}
                        disabled={verify.isPending}
                        onClick={() => verify.mutate(domain)}
                      >
                        {domain.verifiedAt === null
                          ? `Verify ${domain.domain}`
                          : `Check ${domain.domain} again`}
                      </button>
                      <ConfirmButton
                        label={`Remove ${domain.domain}`}
                        confirmLabel="Yes, remove"
                        question="Its verification goes with it."
                        pending={remove.isPending}
                        onConfirm={() => remove.mutate(domain)}
                      />
                    </div>
                  </li>
                ))}
              </ul>
            )
          }
        </QueryState>
      </section>
    </>
  );
}

function ClaimDomain({ onClaimed }: { onClaimed: (domain: ClaimedDomain) => Promise<unknown> }) {
  const { organization } = useWorkspace();
  const [domain, setDomain] = useState('');
  const claim = useMutation({
    mutationFn: () => api<ClaimedDomain>('POST', `/v1/orgs/${organization.id}/domains`, { domain }),
    onSuccess: (claimed) => {
      setDomain('');
      return onClaimed(claimed);
    },
  });
  function submit(event: FormEvent) {
    event.preventDefault();
    claim.mutate();
  }
  return (
    <section className="settings-section" aria-labelledby="claim-domain-title">
      <h2 id="claim-domain-title">Claim a domain</h2>
      <p>
        Prove your organization controls a domain by publishing a DNS TXT record. People with an e-mail
        address at a verified domain can then sign in with your organization's SSO.
      </p>
      <form onSubmit={submit} noValidate className="settings-form" aria-label="Claim a domain">
        <label>
          Domain
          <input
            value={domain}
            onChange={(event) => setDomain(event.target.value)}
            placeholder="example.com"
          />
        </label>
        {claim.error ? <ErrorText>{claim.error.message}</ErrorText> : null}
        <div className="settings-actions">
          <button type="submit" className="primary" disabled={claim.isPending || domain.trim() === ''}>
            Claim domain
          </button>
        </div>
      </form>
    </section>
  );
}
