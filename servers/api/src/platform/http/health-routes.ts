import type { FastifyInstance } from 'fastify';

/** Probes: `/healthz` (the process answers) and `/readyz` (database and blob store reachable). */
export default async function healthRoutes(fastify: FastifyInstance) {
  fastify.get('/healthz', { schema: { hide: true } }, async () => ({ status: 'ok' }));

  fastify.get('/readyz', { schema: { hide: true } }, async (request, reply) => {
    const checks = await Promise.allSettled([fastify.databaseHandle.check(), fastify.blobStore.check()]);
    const [database, blobStore] = checks.map((check) =>
      check.status === 'fulfilled' ? 'ok' : 'unavailable',
    );
    for (const check of checks) {
      if (check.status === 'rejected') request.log.warn({ err: check.reason }, 'readiness check failed');
    }
    if (database === 'ok' && blobStore === 'ok') return { status: 'ok', database, blobStore };
    return reply
      .code(503)
      .send({ error: `Not ready: database ${database}, blob store ${blobStore}`, code: 'internal' });
  });
}
