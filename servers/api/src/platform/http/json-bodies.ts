import { TextDecoder } from 'node:util';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { invalid } from './errors.ts';

/**
 * `application/json`, `application/<anything>+json` (`merge-patch+json`, `vnd.api+json`) and
 * `text/plain` (what `fetch` sends for a string body when the caller sets no type).
 */
const JSON_TYPES: ReadonlyArray<string | RegExp> = [
  'application/json',
  /^application\/[\w.!#$&^-]+\+json$/,
  'text/plain',
];

/** Charsets read as UTF-8 without a decoder (ASCII is a subset). */
const UTF8_CHARSETS = new Set(['utf-8', 'utf8', 'us-ascii', 'ascii']);

function charsetOf(contentType: string | undefined): string | undefined {
  const match = /;\s*charset\s*=\s*("?)([^";\s]+)\1/i.exec(contentType ?? '');
  return match?.[2]?.toLowerCase();
}

/** The body as text, decoded by its `charset` (UTF-8 when none is given). */
function decode(body: Buffer, contentType: string | undefined): string {
  const charset = charsetOf(contentType);
  if (charset === undefined || UTF8_CHARSETS.has(charset)) return body.toString('utf8');
  let decoder: TextDecoder;
  try {
    decoder = new TextDecoder(charset);
  } catch {
    throw invalid(`The charset ${JSON.stringify(charset.slice(0, 40))} is not supported: send UTF-8`, 415);
  }
  return decoder.decode(body);
}

/**
 * JSON request bodies as reasonable HTTP clients send them (on the instance it is given and the
 * contexts below it; ingest reads its bodies itself):
 * - an empty body is no body, whatever its `Content-Type` says (many clients send
 *   `Content-Type: application/json` on a POST without a body): routes that take none succeed,
 *   routes that need one answer their usual 400 `invalid`;
 * - the `charset` parameter is honoured (UTF-8 by default; an unknown charset is 415);
 * - `+json` media types and `text/plain` holding JSON are read as JSON.
 * Parsing keeps Fastify's own JSON parser (its `__proto__` and `constructor` poisoning checks)
 * and its body limit.
 *
 * @example
 * ```ts
 * acceptJsonBodies(fastify); // before the routes are registered
 * ```
 */
export function acceptJsonBodies(fastify: FastifyInstance): void {
  const parseJson = fastify.getDefaultJsonParser('error', 'error');
  fastify.removeContentTypeParser(['application/json', 'text/plain']);
  const parse = (
    request: FastifyRequest,
    body: Buffer,
    done: (error: Error | null, body?: unknown) => void,
  ) => {
    let text: string;
    try {
      text = decode(body, request.headers['content-type']);
    } catch (error) {
      done(error as Error);
      return;
    }
    if (text.trim() === '') {
      done(null, undefined);
      return;
    }
    parseJson(request, text, done);
  };
  for (const type of JSON_TYPES) fastify.addContentTypeParser(type, { parseAs: 'buffer' }, parse);
}
