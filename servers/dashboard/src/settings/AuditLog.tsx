import { useInfiniteQuery, useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { api, type Page, type Project } from '../api.ts';
import { formatDateTime } from '../ui/format.ts';
import { QueryState } from '../ui/status.tsx';
import { useWorkspace } from '../ui/workspace.tsx';
import { useMembers } from './Members.tsx';
import { SelectField } from './parts.tsx';
import { administers } from './permissions.ts';
import { SettingsLayout } from './SettingsLayout.tsx';
import type { AuditEntry } from './types.ts';

/** The audit trail's actions (servers/api/README.md, Organizations and access) in words. */
export const AUDIT_ACTIONS: Record<string, string> = {
  'organization.created': 'Organization created',
  'organization.renamed': 'Organization renamed',
  'member.joined': 'Member joined',
  'member.role_changed': 'Member role changed',
  'member.removed': 'Member removed',
  'member.left': 'Member left',
  'invitation.created': 'Invitation sent',
  'invitation.revoked': 'Invitation revoked',
  'project.created': 'Project created',
  'project.updated': 'Project settings changed',
  'project.key_rotated': 'Project key rotated',
  'project.deleted': 'Project deleted',
  'token.created': 'API token created',
  'token.revoked': 'API token revoked',
  'user.signed_in': 'Signed in',
  'user.password_changed': 'Password changed',
  'user.password_reset': 'Password reset',
  'user.mfa_enabled': 'Two-factor sign-in turned on',
  'user.mfa_disabled': 'Two-factor sign-in turned off',
  'user.recovery_codes_replaced': 'Recovery codes replaced',
};

/** `member.role_changed` → `Member role changed`; an action the dashboard does not know yet as is. */
export function auditActionName(action: string): string {
  return AUDIT_ACTIONS[action] ?? action;
}

const PAGE_SIZE = 50;

/** The organization's audit trail, newest first, page after page (admins and owners). */
export function AuditLogPage() {
  const { organization } = useWorkspace();
  return (
    <SettingsLayout title="Audit log">
      {administers(organization.role) ? (
        <AuditLog />
      ) : (
        <p className="settings-note" role="note">
          The audit log is for the organization's admins and owners.
        </p>
      )}
    </SettingsLayout>
  );
}

function AuditLog() {
  const { organization } = useWorkspace();
  const [action, setAction] = useState('');
  const members = useMembers(organization.id);
  const entries = useInfiniteQuery({
    queryKey: ['settings', 'audit', organization.id, action],
    initialPageParam: undefined as string | undefined,
    queryFn: ({ pageParam }) => {
      const query = new URLSearchParams({ limit: String(PAGE_SIZE) });
      if (action !== '') query.set('action', action);
      if (pageParam !== undefined) query.set('cursor', pageParam);
      return api<Page<AuditEntry>>('GET', `/v1/orgs/${organization.id}/audit?${query}`);
    },
    getNextPageParam: (last) => last.nextCursor,
    select: (data) => data.pages.flatMap((page) => page.items),
  });
  const projects = useQuery({
    queryKey: ['projects', organization.id],
    queryFn: () => api<{ items: Project[] }>('GET', `/v1/orgs/${organization.id}/projects`),
  });
  /** A target in words: a member or a project by name, anything else by its kind and id. */
  function targetOf(entry: AuditEntry): string {
    const target = entry.target;
    if (target === undefined) return '';
    if (target.type === 'user') {
      const member = members.data?.find((candidate) => candidate.userId === target.id);
      if (member !== undefined) return member.name ?? member.email;
    }
    const named = entry.details.name ?? entry.details.email;
    if ((target.type === 'api_token' || target.type === 'invitation') && typeof named === 'string')
      return `${target.type === 'api_token' ? 'API token' : 'invitation to'} ${named}`;
    if (target.type === 'project') {
      const project = projects.data?.items.find((candidate) => candidate.id === target.id);
      if (project !== undefined) return `project ${project.name}`;
    }
    return `${target.type.replace('_', ' ')} ${target.id}`;
  }
  return (
    <>
      <p>Who did what in {organization.name}, newest first. Every security-relevant change is here.</p>
      <SelectField label="Show" value={action} onChange={setAction} className="settings-filter">
        <option value="">Every action</option>
        {Object.entries(AUDIT_ACTIONS).map(([value, label]) => (
          <option key={value} value={value}>
            {label}
          </option>
        ))}
      </SelectField>
      <QueryState query={entries}>
        {(items) =>
          items.length === 0 ? (
            <p>Nothing recorded{action === '' ? '' : ' for this action'}.</p>
          ) : (
            <table className="settings-audit">
              <thead>
                <tr>
                  <th scope="col">Time</th>
                  <th scope="col">Event</th>
                  <th scope="col">Actor</th>
                  <th scope="col">Target</th>
                  <th scope="col">Details</th>
                </tr>
              </thead>
              <tbody>
                {items.map((entry) => (
                  <tr key={entry.id}>
                    <td>
                      <time dateTime={entry.createdAt}>{formatDateTime(entry.createdAt)}</time>
                    </td>
                    <td>{auditActionName(entry.action)}</td>
                    <td>{actorOf(entry)}</td>
                    <td>{targetOf(entry)}</td>
                    <td>
                      {describeDetails(entry)}
                      {entry.ip === undefined ? null : (
                        <span className="settings-hint"> from {entry.ip}</span>
                      )}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          )
        }
      </QueryState>
      {entries.hasNextPage ? (
        <button type="button" onClick={() => entries.fetchNextPage()} disabled={entries.isFetchingNextPage}>
          Older entries
        </button>
      ) : null}
    </>
  );
}

function actorOf(entry: AuditEntry): string {
  const { actor } = entry;
  if (actor.type === 'system') return 'The server';
  if (actor.type === 'api_token') return `API token ${actor.label ?? actor.id ?? ''}`.trim();
  return actor.label ?? actor.id ?? 'Someone';
}

/** The details of an entry that say something to a person (never secrets: the API keeps none). */
function describeDetails(entry: AuditEntry): string {
  const details = entry.details;
  const text = (name: string) => (typeof details[name] === 'string' ? (details[name] as string) : undefined);
  switch (entry.action) {
    case 'member.role_changed':
      return `${text('from') ?? '?'} → ${text('to') ?? '?'}`;
    case 'member.joined':
    case 'member.removed':
    case 'member.left':
      return text('role') === undefined ? '' : `as ${text('role')}`;
    case 'invitation.created':
      return `${text('email') ?? ''} as ${text('role') ?? 'member'}`;
    case 'invitation.revoked':
      return text('email') ?? '';
    case 'organization.renamed':
      return `${text('from') ?? ''} → ${text('to') ?? ''}`;
    case 'project.updated':
      return Array.isArray(details.changed) ? `changed: ${details.changed.join(', ')}` : '';
    case 'project.key_rotated':
      return text('previousKeyExpiresAt') === undefined
        ? ''
        : `previous key works until ${formatDateTime(text('previousKeyExpiresAt') as string)}`;
    case 'token.created':
      return `${text('name') ?? ''}${Array.isArray(details.scopes) ? ` (${details.scopes.join(', ')})` : ''}`;
    case 'token.revoked':
    case 'project.created':
    case 'project.deleted':
      return text('name') ?? '';
    case 'user.signed_in':
      return text('method') === undefined ? '' : `with ${text('method')?.replace('_', ' ')}`;
    default:
      return '';
  }
}
