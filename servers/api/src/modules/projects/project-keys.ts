import type { FastifyInstance } from 'fastify';
import fastifyPlugin from 'fastify-plugin';
import type { Project } from '../../platform/database/tables/projects.table.ts';
import { createTtlCache } from '../../platform/ttl-cache.ts';
import { findProjectByKey } from './projects.ts';

/** How long a project found by its key is reused (the SDK config is cached this long too). */
const PROJECT_KEY_CACHE_SECONDS = 60;

declare module 'fastify' {
  interface FastifyInstance {
    /** Projects by project key, cached {@link PROJECT_KEY_CACHE_SECONDS} (ingest and SDK config). */
    projectKeys: {
      find(key: string): Promise<Project | undefined>;
      /** Forgets a project after its key or settings changed in this process. */
      invalidate(projectId: string): void;
    };
  }
}

/**
 * Ingest and `/v1/config` look a project up by its public key on every request; this keeps the
 * lookup out of the hot path. A change made through this server (`PATCH /v1/projects/{id}`)
 * applies at once; one made elsewhere (another process, the CLI on PostgreSQL) within 60 s.
 * Unknown keys are not cached, so a new project's key works at once.
 */
export const projectKeysPlugin = fastifyPlugin(
  async (fastify: FastifyInstance) => {
    const cache = createTtlCache<Project>({ ttlMs: PROJECT_KEY_CACHE_SECONDS * 1000, maxEntries: 10_000 });
    fastify.decorate('projectKeys', {
      async find(key: string) {
        const cached = cache.get(key);
        if (cached !== undefined) return cached;
        const project = await findProjectByKey(fastify.database, key);
        if (project !== undefined) cache.set(key, project);
        return project;
      },
      invalidate(projectId: string) {
        cache.deleteWhere((project) => project.id === projectId);
      },
    });
  },
  { name: 'project-keys', dependencies: ['services'] },
);
