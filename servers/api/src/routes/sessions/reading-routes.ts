import type { FastifyInstance } from 'fastify';
import shareRoutes from '../share/index.ts';
import visitRoutes from '../visits/index.ts';
import sessionRoutes from './index.ts';

/**
 * The read API of recorded sessions, registered by app.ts in one line: `/v1/sessions`,
 * `/v1/visits` (API token) and `/share` (public, by share token).
 */
export default async function readingRoutes(fastify: FastifyInstance) {
  await fastify.register(sessionRoutes, { prefix: '/v1/sessions' });
  await fastify.register(visitRoutes, { prefix: '/v1/visits' });
  await fastify.register(shareRoutes, { prefix: '/share' });
}
