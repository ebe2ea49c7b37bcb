import { createContext, useContext } from 'react';
import type { Me, Organization, Project } from '../api.ts';

/** Who is signed in and what they look at: the organization and project the switcher chose. */
export interface Workspace {
  me: Me;
  organization: Organization;
  project: Project;
}

export const WorkspaceContext = createContext<Workspace | undefined>(undefined);

/** The signed-in person, the selected organization (with their role in it) and project. */
export function useWorkspace(): Workspace {
  const workspace = useContext(WorkspaceContext);
  if (workspace === undefined) throw new Error('useWorkspace() outside a signed-in page');
  return workspace;
}
