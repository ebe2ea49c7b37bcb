import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { api } from '../api.ts';
import { ErrorText, QueryState } from '../ui/status.tsx';
import { useWorkspace } from '../ui/workspace.tsx';
import { ConfirmButton, CopyButton, SelectField, StatusText } from './parts.tsx';
import { administers } from './permissions.ts';
import { SettingsLayout } from './SettingsLayout.tsx';

// The organization's SSO (servers/api/README.md, Organization SSO): its SAML and OpenID
// connections (what the IdP's admin needs to configure, enable, default role, delete), a new
// connection, and "require SSO" for its verified domains. Admins and owners only.

type SsoRole = 'admin' | 'member' | 'viewer';

/** A connection as `/v1/orgs/{orgId}/sso` answers it. */
interface Connection {
  id: string;
  type: 'saml' | 'oidc';
  name: string;
  defaultRole: SsoRole;
  enabled: boolean;
  startUrl: string;
  saml?: {
    entityId: string;
    ssoUrl: string;
    certificates: { subject: string; notAfter: string; sha256: string }[];
    serviceProvider: { entityId: string; acsUrl: string; metadataUrl: string };
  };
  oidc?: { issuer: string; clientId: string; redirectUri: string };
}

interface Settings {
  ssoRequired: boolean;
  enabledConnections: number;
}

/** `/settings/sso`. */
export function SsoPage() {
  const { organization } = useWorkspace();
  const connections = useQuery({
    queryKey: ['settings', 'sso', organization.id],
    queryFn: () => api<{ items: Connection[] }>('GET', `/v1/orgs/${organization.id}/sso`),
    enabled: administers(organization.role),
  });
  if (!administers(organization.role))
    return (
      <SettingsLayout title="Single sign-on">
        <p>Admins and owners of {organization.name} manage its single sign-on.</p>
      </SettingsLayout>
    );
  return (
    <SettingsLayout title="Single sign-on">
      <p>
        People of {organization.name}'s verified domains sign in through its identity provider (SAML 2.0 or
        OpenID Connect) with "Sign in with SSO", and join the organization with the connection's default role
        the first time.
      </p>
      <RequireSso />
      <section className="settings-section" aria-labelledby="sso-connections-title">
        <h2 id="sso-connections-title">Connections</h2>
        <QueryState query={connections}>
          {(data) =>
            data.items.length === 0 ? (
              <p>No connection yet.</p>
            ) : (
              <ul className="settings-list" aria-label="SSO connections">
                {data.items.map((connection) => (
                  <ConnectionItem key={connection.id} connection={connection} />
                ))}
              </ul>
            )
          }
        </QueryState>
      </section>
      <NewConnection />
    </SettingsLayout>
  );
}

function useInvalidate() {
  const queryClient = useQueryClient();
  const { organization } = useWorkspace();
  return () =>
    Promise.all([
      queryClient.invalidateQueries({ queryKey: ['settings', 'sso', organization.id] }),
      queryClient.invalidateQueries({ queryKey: ['settings', 'sso-settings', organization.id] }),
    ]);
}

function RequireSso() {
  const { organization } = useWorkspace();
  const invalidate = useInvalidate();
  const settings = useQuery({
    queryKey: ['settings', 'sso-settings', organization.id],
    queryFn: () => api<Settings>('GET', `/v1/orgs/${organization.id}/sso/settings`),
  });
  const save = useMutation({
    mutationFn: (ssoRequired: boolean) =>
      api<Settings>('PATCH', `/v1/orgs/${organization.id}/sso/settings`, { ssoRequired }),
    onSuccess: invalidate,
  });
  return (
    <section className="settings-section" aria-labelledby="sso-require-title">
      <h2 id="sso-require-title">Require SSO</h2>
      <QueryState query={settings}>
        {(data) => (
          <>
            <label className="settings-check">
              <input
                type="checkbox"
                checked={data.ssoRequired}
                disabled={save.isPending}
                onChange={(event) => save.mutate(event.target.checked)}
              />
              Require SSO of the people of the verified domains
            </label>
            <p className="hint">
              Their password, sign-in links, invitations, OAuth and passkeys are then refused. Owners keep
              their other ways in, for when the identity provider is down.
            </p>
            {save.error ? <ErrorText>{save.error.message}</ErrorText> : null}
          </>
        )}
      </QueryState>
    </section>
  );
}

function Field({ label, value }: { label: string; value: string }) {
  return (
    <div className="settings-secret">
      <span>{label}</span> <code>{value}</code>{' '}
      <CopyButton text={value} label={`Copy ${label.toLowerCase()}`} />
    </div>
  );
}

function ConnectionItem({ connection }: { connection: Connection }) {
  const { organization } = useWorkspace();
  const invalidate = useInvalidate();
  const change = useMutation({
    mutationFn: (body: Partial<Pick<Connection, 'enabled' | 'defaultRole'>>) =>
      api<Connection>('PATCH', `/v1/orgs/${organization.id}/sso/${connection.id}`, body),
    onSuccess: invalidate,
  });
  const remove = useMutation({
    mutationFn: () => api<void>('DELETE', `/v1/orgs/${organization.id}/sso/${connection.id}`),
    onSuccess: invalidate,
  });
  return (
    <li data-testid="sso-connection">
      <h3>
        {connection.name} <small>({connection.type === 'saml' ? 'SAML 2.0' : 'OpenID Connect'})</small>
      </h3>
      {connection.saml === undefined ? null : (
        <>
          <Field label="SP entity ID" value={connection.saml.serviceProvider.entityId} />
          <Field label="ACS URL" value={connection.saml.serviceProvider.acsUrl} />
          <p>
            IdP <code>{connection.saml.entityId}</code>; certificate{' '}
            {connection.saml.certificates
              .map((certificate) => `${certificate.subject} until ${certificate.notAfter.slice(0, 10)}`)
              .join(', ')}
          </p>
        </>
      )}
      {connection.oidc === undefined ? null : (
        <>
          <Field label="Redirect URI" value={connection.oidc.redirectUri} />
          <p>
            Issuer <code>{connection.oidc.issuer}</code>, client <code>{connection.oidc.clientId}</code>
          </p>
        </>
      )}
      <div className="settings-actions">
        <label className="settings-check">
          <input
            type="checkbox"
            checked={connection.enabled}
            disabled={change.isPending}
            onChange={(event) => change.mutate({ enabled: event.target.checked })}
          />
          Enabled
        </label>
        <SelectField
          label="New members join as"
          value={connection.defaultRole}
          onChange={(value) => change.mutate({ defaultRole: value as SsoRole })}
        >
          <option value="member">member</option>
          <option value="viewer">viewer</option>
          <option value="admin">admin</option>
        </SelectField>
        <ConfirmButton
          label="Delete"
          confirmLabel="Yes, delete it"
          question={`Delete ${connection.name}? Its people sign in another way until a new one is set up.`}
          onConfirm={() => remove.mutate()}
          pending={remove.isPending}
        />
      </div>
      {change.error ? <ErrorText>{change.error.message}</ErrorText> : null}
      {remove.error ? <ErrorText>{remove.error.message}</ErrorText> : null}
    </li>
  );
}

function NewConnection() {
  const { organization } = useWorkspace();
  const invalidate = useInvalidate();
  const [type, setType] = useState<'oidc' | 'saml'>('oidc');
  const [defaultRole, setDefaultRole] = useState<SsoRole>('member');
  const [saved, setSaved] = useState<string>();
  const create = useMutation({
    mutationFn: (body: Record<string, unknown>) =>
      api<Connection>('POST', `/v1/orgs/${organization.id}/sso`, body),
    onMutate: () => setSaved(undefined),
    onSuccess: async (connection) => {
      setSaved(`Added ${connection.name}.`);
      await invalidate();
    },
  });
  function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    const text = (name: string) => String(form.get(name) ?? '').trim();
    const common = { type, name: text('name'), defaultRole };
    if (type === 'oidc')
      create.mutate({
        ...common,
        issuer: text('issuer'),
        clientId: text('clientId'),
        clientSecret: text('clientSecret'),
      });
    else create.mutate({ ...common, metadataXml: text('metadataXml') });
  }
  return (
    <section className="settings-section" aria-labelledby="sso-new-title">
      <h2 id="sso-new-title">New connection</h2>
      <form onSubmit={submit} className="settings-form" aria-label="New SSO connection">
        <div className="settings-grid">
          <SelectField label="Type" value={type} onChange={(value) => setType(value as 'oidc' | 'saml')}>
            <option value="oidc">OpenID Connect</option>
            <option value="saml">SAML 2.0</option>
          </SelectField>
          <label>
            Name
            <input name="name" required maxLength={200} />
          </label>
          <SelectField
            label="New members join as"
            value={defaultRole}
            onChange={(value) => setDefaultRole(value as SsoRole)}
          >
            <option value="member">member</option>
            <option value="viewer">viewer</option>
            <option value="admin">admin</option>
          </SelectField>
        </div>
        {type === 'oidc' ? (
          <div className="settings-grid">
            <label>
              Issuer URL
              <input name="issuer" type="url" required />
            </label>
            <label>
              Client ID
              <input name="clientId" required />
            </label>
            <label>
              Client secret
              <input name="clientSecret" type="password" autoComplete="off" required />
            </label>
          </div>
        ) : (
          <label>
            Identity provider metadata (XML)
            <textarea name="metadataXml" rows={6} required />
          </label>
        )}
        {create.error ? <ErrorText>{create.error.message}</ErrorText> : null}
        <div className="settings-actions">
          <button type="submit" className="primary" disabled={create.isPending}>
            Add connection
          </button>
          {saved === undefined ? null : <StatusText>{saved}</StatusText>}
        </div>
      </form>
    </section>
  );
}
