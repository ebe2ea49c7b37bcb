import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { api, type Project } from '../api.ts';
import { formatDateTime } from '../ui/format.ts';
import { ErrorText, QueryState } from '../ui/status.tsx';
import { useWorkspace } from '../ui/workspace.tsx';
import { useMembers } from './Members.tsx';
import { ConfirmButton, CopyButton, SelectField, StatusText } from './parts.tsx';
import { administers } from './permissions.ts';
import { SettingsLayout } from './SettingsLayout.tsx';
import { type ApiToken, type CreatedApiToken, SCOPES } from './types.ts';

/** Expiry choices, in days (`undefined`: never). */
const EXPIRIES: [string, number | undefined][] = [
  ['Never', undefined],
  ['7 days', 7],
  ['30 days', 30],
  ['90 days', 90],
  ['1 year', 365],
];

/** The organization's API tokens: create one (its secret shown once), list them, revoke. */
export function TokensPage() {
  const { organization } = useWorkspace();
  return (
    <SettingsLayout title="API tokens">
      {administers(organization.role) ? (
        <Tokens />
      ) : (
        <p className="settings-note" role="note">
          API tokens are managed by the organization's admins and owners.
        </p>
      )}
    </SettingsLayout>
  );
}

function Tokens() {
  const { organization, project } = useWorkspace();
  const queryClient = useQueryClient();
  const key = ['settings', 'tokens', organization.id];
  const tokens = useQuery({
    queryKey: key,
    queryFn: () => api<{ items: ApiToken[] }>('GET', `/v1/orgs/${organization.id}/tokens`),
  });
  const projects = useQuery({
    queryKey: ['projects', organization.id],
    queryFn: () => api<{ items: Project[] }>('GET', `/v1/orgs/${organization.id}/projects`),
  });
  const members = useMembers(organization.id);
  const [created, setCreated] = useState<CreatedApiToken | undefined>();
  const [message, setMessage] = useState<string | undefined>();
  const revoke = useMutation({
    mutationFn: (token: ApiToken) => api<void>('DELETE', `/v1/orgs/${organization.id}/tokens/${token.id}`),
    onMutate: () => setMessage(undefined),
    onSuccess: (_, token) => setMessage(`${token.name} was revoked: it no longer works.`),
    onSettled: () => queryClient.invalidateQueries({ queryKey: key }),
  });
  const projectName = (id: string) =>
    projects.data?.items.find((candidate) => candidate.id === id)?.name ?? id;
  const memberName = (id: string | undefined) => {
    const member = members.data?.find((candidate) => candidate.userId === id);
    return member === undefined ? '—' : (member.name ?? member.email);
  };
  return (
    <>
      {created === undefined ? (
        <CreateToken
          projects={projects.data?.items ?? [project]}
          onCreated={(token) => {
            setMessage(undefined);
            setCreated(token);
            return queryClient.invalidateQueries({ queryKey: key });
          }}
        />
      ) : (
        <section className="settings-section settings-secret" aria-labelledby="new-token-title">
          <h2 id="new-token-title">Your new token: {created.name}</h2>
          <p>
            <strong>Copy it now: it is not shown again.</strong> Send it as{' '}
            <code>Authorization: Bearer …</code>.
          </p>
          <p className="settings-row">
            <code data-testid="token-secret">{created.token}</code>
            <CopyButton text={created.token} label="Copy token" />
          </p>
          <button type="button" onClick={() => setCreated(undefined)}>
            Done, I copied it
          </button>
        </section>
      )}
      <section className="settings-section" aria-labelledby="tokens-title">
        <h2 id="tokens-title">Active tokens</h2>
        {revoke.error ? <ErrorText>{revoke.error.message}</ErrorText> : null}
        {message === undefined ? null : <StatusText>{message}</StatusText>}
        <QueryState query={tokens}>
          {(data) =>
            data.items.length === 0 ? (
              <p>No API tokens.</p>
            ) : (
              <table>
                <thead>
                  <tr>
                    <th scope="col">Name</th>
                    <th scope="col">Project</th>
                    <th scope="col">Scopes</th>
                    <th scope="col">Expires</th>
                    <th scope="col">Created</th>
                    <th scope="col">Actions</th>
                  </tr>
                </thead>
                <tbody>
                  {data.items.map((token) => (
                    <tr key={token.id}>
                      <td>{token.name}</td>
                      <td>{projectName(token.projectId)}</td>
                      <td>
                        {token.scopes.length === SCOPES.length ? 'Full access' : token.scopes.join(', ')}
                      </td>
                      <td>{token.expiresAt === undefined ? 'Never' : formatDateTime(token.expiresAt)}</td>
                      <td>
                        {formatDateTime(token.createdAt)}
                        {token.createdBy === undefined ? '' : ` by ${memberName(token.createdBy)}`}
                      </td>
                      <td>
                        <ConfirmButton
                          label={`Revoke ${token.name}`}
                          confirmLabel="Yes, revoke"
                          question="It stops working at once."
                          pending={revoke.isPending}
                          onConfirm={() => revoke.mutate(token)}
                        />
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            )
          }
        </QueryState>
      </section>
    </>
  );
}

function CreateToken({
  projects,
  onCreated,
}: {
  projects: Project[];
  onCreated: (token: CreatedApiToken) => Promise<unknown>;
}) {
  const { organization, project } = useWorkspace();
  const [name, setName] = useState('');
  const [projectId, setProjectId] = useState(project.id);
  const [scopes, setScopes] = useState<string[]>(['sessions:read', 'calls:read', 'issues:read']);
  const [expiry, setExpiry] = useState('Never');
  const create = useMutation({
    mutationFn: () =>
      api<CreatedApiToken>('POST', `/v1/orgs/${organization.id}/tokens`, {
        name,
        projectId,
        scopes,
        expiresInDays: EXPIRIES.find(([label]) => label === expiry)?.[1],
      }),
    onSuccess: onCreated,
  });
  function submit(event: FormEvent) {
    event.preventDefault();
    create.mutate();
  }
  return (
    <section className="settings-section" aria-labelledby="create-token-title">
      <h2 id="create-token-title">Create a token</h2>
      <p>A token acts for one project, with the scopes you give it, until it expires or is revoked.</p>
      <form onSubmit={submit} noValidate className="settings-form" aria-label="Create a token">
        <div className="settings-grid">
          <label>
            Token name
            <input value={name} onChange={(event) => setName(event.target.value)} placeholder="CI export" />
          </label>
          <SelectField label="Project" value={projectId} onChange={setProjectId}>
            {projects.map((candidate) => (
              <option key={candidate.id} value={candidate.id}>
                {candidate.name}
              </option>
            ))}
          </SelectField>
          <SelectField label="Expires after" value={expiry} onChange={setExpiry}>
            {EXPIRIES.map(([label]) => (
              <option key={label} value={label}>
                {label}
              </option>
            ))}
          </SelectField>
        </div>
        <fieldset className="settings-scopes">
          <legend>Scopes</legend>
          {SCOPES.map((scope) => (
            <label key={scope} className="settings-check">
              <input
                type="checkbox"
                checked={scopes.includes(scope)}
                onChange={(event) =>
                  setScopes((current) =>
                    event.target.checked ? [...current, scope] : current.filter((other) => other !== scope),
                  )
                }
              />
              {scope}
            </label>
          ))}
        </fieldset>
        {create.error ? <ErrorText>{create.error.message}</ErrorText> : null}
        <div className="settings-actions">
          <button type="submit" className="primary" disabled={create.isPending}>
            Create token
          </button>
        </div>
      </form>
    </section>
  );
}
