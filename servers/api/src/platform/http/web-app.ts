import { access, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import helmet from '@fastify/helmet';
import fastifyStatic from '@fastify/static';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fastifyPlugin from 'fastify-plugin';

/** Paths of the API itself: never answered with the dashboard's page. */
const API_PATHS = /^\/(v1|auth|share|openapi\.json|healthz|readyz)(\/|$|\?)/;

/**
 * The security headers of every answer (`@fastify/helmet`), with a strict Content-Security-Policy:
 * scripts, styles and connections from this origin only, no inline script or style, no `eval`, no
 * framing by other sites.
 */
export const securityHeadersPlugin = fastifyPlugin(
  async (fastify: FastifyInstance) => {
    await fastify.register(helmet, {
      contentSecurityPolicy: {
        useDefaults: false,
        directives: {
          defaultSrc: ["'self'"],
          scriptSrc: ["'self'"],
          styleSrc: ["'self'"],
          imgSrc: ["'self'", 'data:', 'blob:'],
          fontSrc: ["'self'"],
          connectSrc: ["'self'"],
          frameSrc: ["'self'"],
          objectSrc: ["'none'"],
          baseUri: ["'self'"],
          formAction: ["'self'"],
          frameAncestors: ["'self'"],
        },
      },
      // The API answers other origins' SDKs (ingest, /v1/config): their fetches are not embeds.
      crossOriginResourcePolicy: false,
      crossOriginEmbedderPolicy: false,
    });
  },
  { name: 'security-headers' },
);

/**
 * The dashboard (`@svc/dashboard`'s built files): its assets under `/assets/`, and its page for
 * any other `GET` a browser makes for HTML outside the API's paths (the app routes itself), so a
 * link such as `/sessions/ses_…?t=1200` opens it. Without a build, those answer 404 with how to
 * build it; the API works the same.
 */
export async function webAppRoutes(fastify: FastifyInstance, options: { directory: string }) {
  const index = join(options.directory, 'index.html');
  const built = await access(index).then(
    () => true,
    () => false,
  );
  if (built) {
    await fastify.register(fastifyStatic, {
      root: join(options.directory, 'assets'),
      prefix: '/assets/',
      // Hashed file names: cached for a year, never revalidated.
      immutable: true,
      maxAge: '365d',
    });
  }
  const page = built ? await readFile(index) : undefined;

  fastify.get('/*', { schema: { hide: true } }, async (request: FastifyRequest, reply: FastifyReply) => {
    const path = request.url;
    if (API_PATHS.test(path) || !(request.headers.accept ?? '').includes('text/html'))
      return reply.callNotFound();
    if (page === undefined)
      return reply.code(404).send({
        error:
          'The dashboard is not built: run pnpm start (it builds it), or pnpm --filter @svc/dashboard build',
        code: 'not_found',
      });
    return reply.type('text/html; charset=utf-8').header('cache-control', 'no-cache').send(page);
  });
}
