import { api, type Organization, type Project } from '../api.ts';

// A link to a session names no project (the webhooks' `links.replay` is `/sessions/<id>?t=…`), and
// the API reads a session in one project at a time (`X-Service-Project`). When the session is not
// in the project the switcher chose, it is looked for in the person's other projects.

/** Whether project `projectId` holds session `sessionId` (`GET /v1/sessions/{id}` in it). */
async function holds(projectId: string, sessionId: string): Promise<boolean> {
  const response = await fetch(`/v1/sessions/${encodeURIComponent(sessionId)}`, {
    method: 'HEAD',
    headers: { accept: 'application/json', 'x-service-project': projectId },
    credentials: 'same-origin',
  });
  return response.ok;
}

/** The organization and project holding the session among the person's, if any. */
export async function findSessionProject(
  sessionId: string,
  exceptProjectId: string,
): Promise<{ org: string; project: string } | undefined> {
  const orgs = await api<{ items: Organization[] }>('GET', '/v1/orgs');
  for (const org of orgs.items) {
    const projects = await api<{ items: Project[] }>('GET', `/v1/orgs/${org.id}/projects`);
    for (const project of projects.items) {
      if (project.id === exceptProjectId) continue;
      if (await holds(project.id, sessionId)) return { org: org.id, project: project.id };
    }
  }
  return undefined;
}
