import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { Project } from '../../platform/database/tables/projects.table.ts';
import { notFound } from '../../platform/http/errors.ts';
import { updateProject } from './projects.ts';
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
  createdAt: z.iso.datetime(),
  updatedAt: z.iso.datetime(),
});

function toProjectView(project: Project): z.infer<typeof projectViewSchema> {
  return {
    id: project.id,
    organizationId: project.organization_id,
    name: project.name,
    projectKey: project.project_key,
    settings: readSettings(project.settings),
    createdAt: project.created_at.toISOString(),
    updatedAt: project.updated_at.toISOString(),
  };
}

/** `/v1/projects`: the project bound to the token, and its settings. */
export default async function projectRoutes(fastify: FastifyInstance) {
  const routes = fastify.withTypeProvider<ZodTypeProvider>();
  routes.addHook('onRequest', fastify.authenticate);

  routes.get(
    '/current',
    { schema: { summary: 'The project bound to the API token', response: { 200: projectViewSchema } } },
    async (request) => toProjectView(request.auth.project),
  );

  routes.patch(
    '/:id',
    {
      schema: {
        summary: "Update the project's name or settings",
        params: z.object({ id: z.string().max(64) }),
        body: z.strictObject({
          name: z.string().trim().min(1).max(200).optional(),
          settings: projectSettingsPatchSchema.optional(),
        }),
        response: { 200: projectViewSchema },
      },
    },
    async (request) => {
      // A token sees only its own project: any other id is "not found", never "forbidden".
      if (request.params.id !== request.auth.project.id) throw notFound(`No project ${request.params.id}`);
      const current = request.auth.project;
      const project = await updateProject(fastify.database, current.id, {
        name: request.body.name,
        settings:
          request.body.settings === undefined
            ? undefined
            : applySettingsPatch(readSettings(current.settings), request.body.settings),
      });
      if (project === undefined) throw notFound(`No project ${request.params.id}`);
      // Ingest and the SDK config in this process see the change at once.
      fastify.projectKeys.invalidate(project.id);
      return toProjectView(project);
    },
  );
}
