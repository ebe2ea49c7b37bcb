import type { FastifyInstance } from 'fastify';
import sessionRoutes from './routes.ts';
import shareRoutes from './share-routes.ts';
import visitRoutes from './visits-routes.ts';

/**
 * The read API of recorded sessions, registered by app.ts in one line: `/v1/sessions`,
 * `/v1/visits` (API token) and `/share` (public, by share token).
 */
export default async function readingRoutes(fastify: FastifyInstance) {
  await fastify.register(sessionRoutes, { prefix: '/v1/sessions' });
  await fastify.register(visitRoutes, { prefix: '/v1/visits' });
  await fastify.register(shareRoutes, { prefix: '/share' });
}
