import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import helmet from '@fastify/helmet';
import fastifyStatic from '@fastify/static';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fastifyPlugin from 'fastify-plugin';

/** Paths of the API itself: never answered with the dashboard's page. */
const API_PATHS = /^\/(v1|auth|share|openapi\.json|healthz|readyz)(\/|$|\?)/;

/** A shared session's page: `/share/{token}` (its chunks stay the API's). */
const SHARE_PAGE = /^\/share\/[^/?]+(\?|$)/;

/** Where a recorded page's stylesheets, images, fonts and media may come from: its own servers. */
const RECORDED_ASSETS = ['https:', 'http:'];

/**
 * The security headers of every answer (`@fastify/helmet`), with a strict Content-Security-Policy:
 * scripts and connections from this origin only, no inline script, no `eval`, no framing by other
 * sites. The replay player needs more for what is not a script (servers/dashboard README,
 * Replay): rrweb rebuilds the recorded page in a sandboxed iframe (no scripts) that inherits this
 * policy, with the page's own `<style>` elements and `style` attributes (`style-src
 * 'unsafe-inline'`) and its stylesheets, images, fonts and media from wherever the page had them
 * (`https:`, `http:`). Scripts stay `'self'` only.
 */
export const securityHeadersPlugin = fastifyPlugin(
  async (fastify: FastifyInstance) => {
    await fastify.register(helmet, {
      contentSecurityPolicy: {
        useDefaults: false,
        directives: {
          defaultSrc: ["'self'"],
          scriptSrc: ["'self'"],
          styleSrc: ["'self'", "'unsafe-inline'", ...RECORDED_ASSETS],
          imgSrc: ["'self'", 'data:', 'blob:', ...RECORDED_ASSETS],
          fontSrc: ["'self'", 'data:', ...RECORDED_ASSETS],
          mediaSrc: ["'self'", 'data:', 'blob:', ...RECORDED_ASSETS],
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

/** The dashboard of {@link loadWebApp}: its assets' route plugin and its page for browsers. */
export interface WebApp {
  /** Registers `/assets/` when the dashboard is built. */
  routes(fastify: FastifyInstance): Promise<void>;
  /**
   * For the not-found handler: answers a browser's `GET` for HTML outside the API's paths with the
   * app's page (the app routes itself) and returns true; false for anything else.
   */
  answer(request: FastifyRequest, reply: FastifyReply): boolean;
}

/**
 * The dashboard (`@svc/dashboard`'s built files in `directory`): its assets under `/assets/`, and
 * its page for any other `GET` a browser makes for HTML outside the API's paths, so a link such as
 * `/sessions/ses_…?t=1200` opens it. It answers only what no route matched (the not-found
 * handler), so the API's routes and their errors are untouched. Without a build, those browser
 * requests answer 404 saying how to build it; the API works the same.
 */
export async function loadWebApp(directory: string): Promise<WebApp> {
  const page = await readFile(join(directory, 'index.html')).catch(() => undefined);
  return {
    async routes(fastify) {
      if (page === undefined) return;
      await fastify.register(fastifyStatic, {
        root: join(directory, 'assets'),
        prefix: '/assets/',
        // Hashed file names: cached for a year, never revalidated.
        immutable: true,
        maxAge: '365d',
      });
    },
    answer(request, reply) {
      if (request.method !== 'GET' && request.method !== 'HEAD') return false;
      if (SHARE_PAGE.test(request.url) ? !prefersHtml(request) : API_PATHS.test(request.url)) return false;
      if (!(request.headers.accept ?? '').includes('text/html')) return false;
      if (page === undefined) {
        reply.code(404).send({
          error:
            'The dashboard is not built: run pnpm start (it builds it), or pnpm --filter @svc/dashboard build',
          code: 'not_found',
        });
        return true;
      }
      // A route that hands its request over (the share page) may have set a stricter cache policy.
      if (!reply.hasHeader('cache-control')) reply.header('cache-control', 'no-cache');
      reply.code(200).type('text/html; charset=utf-8').send(page);
      return true;
    },
  };
}

/** The `q` of the first media range of `accept` that `matches`, or 0. */
function quality(accept: string, matches: (type: string) => boolean): number {
  for (const range of accept.split(',')) {
    const [type = '', ...parameters] = range.split(';').map((part) => part.trim().toLowerCase());
    if (!matches(type)) continue;
    const q = parameters.find((parameter) => parameter.startsWith('q='));
    const value = q === undefined ? 1 : Number(q.slice(2));
    return Number.isFinite(value) ? value : 0;
  }
  return 0;
}

/**
 * Whether the request's `Accept` prefers HTML to JSON: a browser's navigation
 * (`text/html,…,*\/*;q=0.8`) does, an API client (`application/json`, `*\/*`, none) does not.
 * Ties go to JSON, so what answered JSON before still does.
 */
export function prefersHtml(request: FastifyRequest): boolean {
  const accept = request.headers.accept ?? '';
  const html = quality(accept, (type) => type === 'text/html');
  const json = quality(
    accept,
    (type) => type === 'application/json' || type === 'application/*' || type === '*/*',
  );
  return html > json;
}
