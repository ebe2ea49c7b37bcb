import { useInfiniteQuery, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { useNavigate } from 'react-router';
import { api, type Organization, type Page } from '../api.ts';
import { formatDateTime } from '../ui/format.ts';
import { ErrorText, QueryState } from '../ui/status.tsx';
import { useWorkspace } from '../ui/workspace.tsx';
import { ConfirmButton, SelectField, StatusText } from './parts.tsx';
import { administers, assignableRoles } from './permissions.ts';
import { ReadOnlyNote, SettingsLayout } from './SettingsLayout.tsx';
import type { Invitation, Member, Role } from './types.ts';

const ROLE_NAMES: Record<Role, string> = {
  owner: 'Owner',
  admin: 'Admin',
  member: 'Member',
  viewer: 'Viewer',
};

/** Every member of the organization, page after page (`GET /v1/orgs/{orgId}/members`). */
export function useMembers(orgId: string) {
  return useInfiniteQuery({
    queryKey: ['settings', 'members', orgId],
    initialPageParam: undefined as string | undefined,
    queryFn: ({ pageParam }) =>
      api<Page<Member>>(
        'GET',
        `/v1/orgs/${orgId}/members?limit=100${pageParam === undefined ? '' : `&cursor=${encodeURIComponent(pageParam)}`}`,
      ),
    getNextPageParam: (last) => last.nextCursor,
    select: (data) => data.pages.flatMap((page) => page.items),
  });
}

/** The organization's members with their roles and, for admins and owners, invitations. */
export function MembersPage() {
  const { organization } = useWorkspace();
  return (
    <SettingsLayout title="Members">
      {administers(organization.role) ? (
        <OrganizationName />
      ) : (
        <ReadOnlyNote what="who is in the organization" />
      )}
      <MemberList />
      {administers(organization.role) ? <Invitations /> : null}
    </SettingsLayout>
  );
}

/** Renaming the organization (admins and owners): `PATCH /v1/orgs/{orgId}`. */
function OrganizationName() {
  const { organization } = useWorkspace();
  const queryClient = useQueryClient();
  const [name, setName] = useState(organization.name);
  const rename = useMutation({
    mutationFn: () => api<Organization>('PATCH', `/v1/orgs/${organization.id}`, { name }),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: ['orgs'] }),
  });
  function submit(event: FormEvent) {
    event.preventDefault();
    rename.mutate();
  }
  return (
    <section className="settings-section" aria-labelledby="organization-title">
      <h2 id="organization-title">Organization</h2>
      <form
        onSubmit={submit}
        noValidate
        className="settings-row settings-inline-form"
        aria-label="Organization"
      >
        <label>
          Organization name
          <input value={name} onChange={(event) => setName(event.target.value)} />
        </label>
        <button type="submit" className="primary" disabled={rename.isPending}>
          Rename
        </button>
      </form>
      {rename.error ? <ErrorText>{rename.error.message}</ErrorText> : null}
      {rename.isSuccess ? <StatusText>The organization is now {rename.data.name}.</StatusText> : null}
    </section>
  );
}

function MemberList() {
  const { organization, me } = useWorkspace();
  const queryClient = useQueryClient();
  const navigate = useNavigate();
  const members = useMembers(organization.id);
  const [message, setMessage] = useState<string | undefined>();
  const refresh = () => queryClient.invalidateQueries({ queryKey: ['settings', 'members', organization.id] });
  const changeRole = useMutation({
    mutationFn: ({ member, role }: { member: Member; role: Role }) =>
      api<Member>('PATCH', `/v1/orgs/${organization.id}/members/${member.userId}`, { role }),
    onMutate: () => setMessage(undefined),
    onSuccess: (member) => setMessage(`${member.name ?? member.email} is now ${ROLE_NAMES[member.role]}.`),
    onSettled: refresh,
  });
  const remove = useMutation({
    mutationFn: (member: Member) =>
      api<void>('DELETE', `/v1/orgs/${organization.id}/members/${member.userId}`),
    onMutate: () => setMessage(undefined),
    onSuccess: async (_, member) => {
      if (member.userId !== me.user.id) {
        setMessage(`${member.name ?? member.email} was removed.`);
        return;
      }
      // Left the organization: it is no longer theirs to see.
      await queryClient.invalidateQueries({ queryKey: ['orgs'] });
      navigate('/sessions');
    },
    // Not after leaving: the organization's members are no longer theirs to read.
    onSettled: (_, error, member) => (error !== null || member.userId !== me.user.id ? refresh() : undefined),
  });
  const administrator = administers(organization.role);
  const error = changeRole.error ?? remove.error;
  return (
    <section className="settings-section" aria-labelledby="members-title">
      <h2 id="members-title">People in {organization.name}</h2>
      {error ? <ErrorText>{error.message}</ErrorText> : null}
      {message === undefined ? null : <StatusText>{message}</StatusText>}
      <QueryState query={members}>
        {(items) => (
          <table>
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">E-mail address</th>
                <th scope="col">Role</th>
                <th scope="col">Joined</th>
                <th scope="col">Actions</th>
              </tr>
            </thead>
            <tbody>
              {items.map((member) => {
                const you = member.userId === me.user.id;
                // Admins neither change nor remove owners; only owners make owners.
                const locked = member.role === 'owner' && organization.role !== 'owner';
                const label = member.name ?? member.email;
                return (
                  <tr key={member.userId}>
                    <td>
                      {label}
                      {you ? ' (you)' : ''}
                    </td>
                    <td>{member.email}</td>
                    <td>
                      {administrator && !locked ? (
                        <select
                          aria-label={`Role of ${label}`}
                          value={member.role}
                          disabled={changeRole.isPending}
                          onChange={(event) =>
                            changeRole.mutate({ member, role: event.target.value as Role })
                          }
                        >
                          {assignableRoles(organization.role).map((role) => (
                            <option key={role} value={role}>
                              {ROLE_NAMES[role]}
                            </option>
                          ))}
                        </select>
                      ) : (
                        ROLE_NAMES[member.role]
                      )}
                    </td>
                    <td>{formatDateTime(member.joinedAt)}</td>
                    <td>
                      {you ? (
                        <ConfirmButton
                          label={`Leave ${organization.name}`}
                          confirmLabel="Yes, leave"
                          question="You lose access to its projects."
                          pending={remove.isPending}
                          onConfirm={() => remove.mutate(member)}
                        />
                      ) : administrator && !locked ? (
                        <ConfirmButton
                          label={`Remove ${label}`}
                          confirmLabel="Yes, remove"
                          question={`Remove ${label} from ${organization.name}?`}
                          pending={remove.isPending}
                          onConfirm={() => remove.mutate(member)}
                        />
                      ) : null}
                    </td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        )}
      </QueryState>
      {members.hasNextPage ? (
        <button type="button" onClick={() => members.fetchNextPage()} disabled={members.isFetchingNextPage}>
          More members
        </button>
      ) : null}
    </section>
  );
}

/** Inviting by e-mail with a role, and the pending invitations (admins and owners). */
function Invitations() {
  const { organization } = useWorkspace();
  const queryClient = useQueryClient();
  const key = ['settings', 'invitations', organization.id];
  const invitations = useQuery({
    queryKey: key,
    queryFn: () => api<{ items: Invitation[] }>('GET', `/v1/orgs/${organization.id}/invitations`),
  });
  const members = useMembers(organization.id);
  const [email, setEmail] = useState('');
  const [role, setRole] = useState<Invitation['role']>('member');
  const [message, setMessage] = useState<string | undefined>();
  const invite = useMutation({
    mutationFn: () => api<Invitation>('POST', `/v1/orgs/${organization.id}/invitations`, { email, role }),
    onMutate: () => setMessage(undefined),
    onSuccess: (invitation) => {
      setMessage(`Invitation sent to ${invitation.email}.`);
      setEmail('');
    },
    onSettled: () => queryClient.invalidateQueries({ queryKey: key }),
  });
  const revoke = useMutation({
    mutationFn: (invitation: Invitation) =>
      api<void>('DELETE', `/v1/orgs/${organization.id}/invitations/${invitation.id}`),
    onMutate: () => setMessage(undefined),
    onSuccess: (_, invitation) => setMessage(`The invitation to ${invitation.email} was revoked.`),
    onSettled: () => queryClient.invalidateQueries({ queryKey: key }),
  });
  function submit(event: FormEvent) {
    event.preventDefault();
    invite.mutate();
  }
  const nameOf = (userId: string | undefined) => {
    const member = members.data?.find((candidate) => candidate.userId === userId);
    return member === undefined ? '—' : (member.name ?? member.email);
  };
  return (
    <section className="settings-section" aria-labelledby="invitations-title">
      <h2 id="invitations-title">Invitations</h2>
      <form onSubmit={submit} className="settings-row settings-inline-form" aria-label="Invite someone">
        <label>
          E-mail address to invite
          <input type="email" required value={email} onChange={(event) => setEmail(event.target.value)} />
        </label>
        <SelectField label="Role" value={role} onChange={(value) => setRole(value as Invitation['role'])}>
          <option value="admin">Admin</option>
          <option value="member">Member</option>
          <option value="viewer">Viewer</option>
        </SelectField>
        <button type="submit" className="primary" disabled={invite.isPending}>
          Send invitation
        </button>
      </form>
      <p className="settings-hint">
        The link in the e-mail works once, for 7 days. Owners are not invited: make a member an owner.
      </p>
      {invite.error ? <ErrorText>{invite.error.message}</ErrorText> : null}
      {revoke.error ? <ErrorText>{revoke.error.message}</ErrorText> : null}
      {message === undefined ? null : <StatusText>{message}</StatusText>}
      <h3 className="settings-subheading">Pending invitations</h3>
      <QueryState query={invitations}>
        {(data) =>
          data.items.length === 0 ? (
            <p>No pending invitations.</p>
          ) : (
            <table>
              <thead>
                <tr>
                  <th scope="col">E-mail address</th>
                  <th scope="col">Role</th>
                  <th scope="col">Invited by</th>
                  <th scope="col">Expires</th>
                  <th scope="col">Actions</th>
                </tr>
              </thead>
              <tbody>
                {data.items.map((invitation) => (
                  <tr key={invitation.id}>
                    <td>{invitation.email}</td>
                    <td>{ROLE_NAMES[invitation.role]}</td>
                    <td>{nameOf(invitation.invitedBy)}</td>
                    <td>{invitation.expired ? 'Expired' : formatDateTime(invitation.expiresAt)}</td>
                    <td>
                      <button
                        type="button"
                        onClick={() => revoke.mutate(invitation)}
                        disabled={revoke.isPending}
                      >
                        Revoke <span className="visually-hidden">the invitation to {invitation.email}</span>
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
