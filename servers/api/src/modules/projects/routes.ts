import { errorBodySchema } from '@svc/protocol';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { auditOrigin, recordAudit } from '../../platform/audit.ts';
import type { Project } from '../../platform/database/tables/projects.table.ts';
import { personOf } from '../../platform/http/authentication.ts';
import { notFound } from '../../platform/http/errors.ts';
import { deleteProject, PROJECT_KEY_GRACE_HOURS, rotateProjectKey, updateProject } from './projects.ts';
import {
  applySettingsPatch,
  projectSettingsPatchSchema,
  projectSettingsSchema,
  readSettings,
} from './settings.ts';

export const projectViewSchema = z.object({
  id: z.string(),
  organizationId: z.string(),
  name: z.string(),
  /** Public: goes into the SDK's init call and only allows ingest. */
  projectKey: z.string(),
  settings: projectSettingsSchema,
  /** The key before the last rotation, while it still ingests. */
  previousProjectKey: z
    .object({ key: z.string(), expiresAt: z.iso.datetime() })
    .optional()
    .describe('The key before the last rotation, while it still ingests'),
  createdAt: z.iso.datetime(),
  updatedAt: z.iso.datetime(),
});

export function toProjectView(project: Project, now = new Date()): z.infer<typeof projectViewSchema> {
  const previousExpires = project.previous_project_key_expires_at;
  return {
    id: project.id,
    organizationId: project.organization_id,
    name: project.name,
    projectKey: project.project_key,
    ...(project.previous_project_key !== null && previousExpires !== null && previousExpires > now
      ? {
          previousProjectKey: { key: project.previous_project_key, expiresAt: previousExpires.toISOString() },
        }
      : {}),
    settings: readSettings(project.settings),
    createdAt: project.created_at.toISOString(),
    updatedAt: project.updated_at.toISOString(),
  };
}

/** Announces what changed a project to the audit trail, in the change's transaction. */
function auditProject(
  request: FastifyRequest,
  action: string,
  projectId: string,
  details?: Record<string, unknown>,
) {
  const { caller, organizationId } = request.auth;
  return (executor: Parameters<typeof recordAudit>[0]) =>
    recordAudit(executor, organizationId, caller, auditOrigin(request), {
      action,
      target: { type: 'project', id: projectId },
      ...(details === undefined ? {} : { details }),
    });
}

/**
 * `/v1/projects`: the project of the caller (`/current`: the token's, or `X-Service-Project`'s),
 * and one project by id (a person's through their membership, a token's own): read, change,
 * delete, rotate its key. Every route needs the `settings` scope of its method.
 */
export default async function projectRoutes(fastify: FastifyInstance) {
  const routes = fastify.withTypeProvider<ZodTypeProvider>();
  const database = fastify.database;
  routes.addHook('onRequest', fastify.authorize('settings'));
  const byId = { projectParam: 'id' };
  const params = z.object({ id: z.string().max(64) });

  routes.get(
    '/current',
    {
      schema: {
        summary: 'The project bound to the API token (or named by X-Service-Project)',
        response: { 200: projectViewSchema },
      },
    },
    async (request) => toProjectView(request.auth.project),
  );

  routes.get(
    '/:id',
    {
      config: byId,
      schema: { summary: 'One project', params, response: { 200: projectViewSchema, 404: errorBodySchema } },
    },
    async (request) => toProjectView(request.auth.project),
  );

  routes.patch(
    '/:id',
    {
      config: byId,
      schema: {
        summary: "Update the project's name or settings",
        params,
        body: z.strictObject({
          name: z.string().trim().min(1).max(200).optional(),
          settings: projectSettingsPatchSchema.optional(),
        }),
        response: { 200: projectViewSchema, 403: errorBodySchema, 404: errorBodySchema },
      },
    },
    async (request) => {
      const current = request.auth.project;
      const project = await database.transaction().execute(async (transaction) => {
        const updated = await updateProject(transaction, current.id, {
          name: request.body.name,
          settings:
            request.body.settings === undefined
              ? undefined
              : applySettingsPatch(readSettings(current.settings), request.body.settings),
        });
        if (updated !== undefined)
          await auditProject(request, 'project.updated', current.id, {
            changed: Object.keys(request.body).sort(),
          })(transaction);
        return updated;
      });
      if (project === undefined) throw notFound(`No project ${request.params.id}`);
      // Ingest and the SDK config in this process see the change at once.
      fastify.projectKeys.invalidate(project.id);
      return toProjectView(project);
    },
  );

  routes.delete(
    '/:id',
    {
      config: { ...byId, personOnly: true },
      schema: {
        summary: 'Delete the project (admins and owners, signed in)',
        description:
          'At once: its project key stops ingesting, its API tokens stop working, and it leaves every list. Answers 204. An API token cannot delete its own project.',
        params,
        response: { 204: z.null(), 403: errorBodySchema, 404: errorBodySchema },
      },
    },
    async (request, reply) => {
      personOf(request);
      const projectId = request.auth.project.id;
      const deleted = await database.transaction().execute(async (transaction) => {
        const project = await deleteProject(transaction, projectId);
        if (project !== undefined)
          await auditProject(request, 'project.deleted', projectId, { name: project.name })(transaction);
        return project;
      });
      if (deleted === undefined) throw notFound(`No project ${projectId}`);
      fastify.projectKeys.invalidate(projectId);
      return reply.code(204).send(null);
    },
  );

  routes.post(
    '/:id/rotate-key',
    {
      config: byId,
      schema: {
        summary: 'Give the project a new project key; the old one keeps ingesting for a grace period',
        description: `The previous key keeps working for ${PROJECT_KEY_GRACE_HOURS} hours (so deployed pages keep recording), then stops. Rotating again ends the previous key's grace at once.`,
        params,
        response: { 200: projectViewSchema, 403: errorBodySchema, 404: errorBodySchema },
      },
    },
    async (request) => {
      const projectId = request.auth.project.id;
      const project = await database.transaction().execute(async (transaction) => {
        const rotated = await rotateProjectKey(transaction, projectId);
        if (rotated !== undefined)
          await auditProject(request, 'project.key_rotated', projectId, {
            previousKeyExpiresAt: rotated.previous_project_key_expires_at?.toISOString(),
          })(transaction);
        return rotated;
      });
      if (project === undefined) throw notFound(`No project ${projectId}`);
      fastify.projectKeys.invalidate(projectId);
      return toProjectView(project);
    },
  );
}
