import { useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { api, type Organization, type Project } from '../api.ts';
import { ErrorText } from '../ui/status.tsx';

/** A one-field creation form (organization or project name) posting to `path`. */
function CreateForm<T extends { id: string }>({
  title,
  intro,
  label,
  path,
  invalidate,
  onCreated,
}: {
  title: string;
  intro: string;
  label: string;
  path: string;
  invalidate: unknown[];
  onCreated: (created: T) => void;
}) {
  const queryClient = useQueryClient();
  const [error, setError] = useState<string | undefined>();
  const [busy, setBusy] = useState(false);
  async function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const name = String(new FormData(event.currentTarget).get('name') ?? '');
    setBusy(true);
    setError(undefined);
    try {
      const created = await api<T>('POST', path, { name });
      await queryClient.invalidateQueries({ queryKey: invalidate });
      onCreated(created);
    } catch (failure) {
      setError(failure instanceof Error ? failure.message : String(failure));
    } finally {
      setBusy(false);
    }
  }
  return (
    <form className="card" onSubmit={submit} aria-labelledby="create-title">
      <h1 id="create-title">{title}</h1>
      <p>{intro}</p>
      <label>
        {label}
        <input name="name" required maxLength={200} />
      </label>
      {error === undefined ? null : <ErrorText>{error}</ErrorText>}
      <button type="submit" disabled={busy}>
        Create
      </button>
    </form>
  );
}

/** The first step of a new account: its own organization (the person becomes its owner). */
export function CreateOrganization({ onCreated }: { onCreated: (organization: Organization) => void }) {
  return (
    <CreateForm<Organization>
      title="Create your organization"
      intro="An organization holds your team and its projects. You will be its owner."
      label="Organization name"
      path="/v1/orgs"
      invalidate={['orgs']}
      onCreated={onCreated}
    />
  );
}

/** An organization without projects: its admins create the first one; others are told to ask. */
export function CreateProject({
  organization,
  onCreated,
}: {
  organization: Organization;
  onCreated: (project: Project) => void;
}) {
  if (organization.role !== 'owner' && organization.role !== 'admin')
    return <p>{organization.name} has no project yet: ask one of its admins to create one.</p>;
  return (
    <CreateForm<Project>
      title="Create a project"
      intro="A project is one app or site: the browser SDK records into it with the project's key."
      label="Project name"
      path={`/v1/orgs/${organization.id}/projects`}
      invalidate={['projects', organization.id]}
      onCreated={onCreated}
    />
  );
}
