import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify';
import { expect } from 'vitest';

// Requests to the app under test (`app.inject`) as a project, and their JSON answers. For a
// server running in its own process, `apiRequest` in process-helpers.ts does the same over fetch.

/** A JSON answer as a test reads it: any shape, which the test's assertions check. */
// biome-ignore lint/suspicious/noExplicitAny: JSON answers of tests
export type Json = any;

export type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/** Whom a request is made as: anything with an API token's headers, such as a `TestProject`. */
export interface Caller {
  headers: { authorization: string };
}

/**
 * Expects the answer's status (`status`, or any 2xx without it; the body is the failure message)
 * and returns its JSON body as `Body`, or undefined for an empty answer (204).
 */
export function expectJson<Body = Json>(response: LightMyRequestResponse, status?: number): Body {
  if (status === undefined) expect(response.statusCode, response.body).toBeLessThan(300);
  else expect(response.statusCode, response.body).toBe(status);
  return (response.statusCode === 204 ? undefined : response.json()) as Body;
}

export interface ApiClient {
  /** `app.inject` with the caller's API token (the default caller unless given), `body` as JSON. */
  request(method: Method, url: string, body?: unknown, caller?: Caller): Promise<LightMyRequestResponse>;
  /** `request`, expecting a 2xx answer: its JSON body (undefined for a 204). */
  ok<Body = Json>(method: Method, url: string, body?: unknown, caller?: Caller): Promise<Body>;
  /** `GET url`, expecting a 200: its JSON body. */
  get<Body = Json>(url: string, caller?: Caller): Promise<Body>;
}

/** What an `ApiClient` sends to: an app and its default caller, such as a `TestApp` (its first project). */
export interface ClientTarget {
  app: FastifyInstance;
  first: Caller;
}

/**
 * Requests to `target().app`, made as `caller()` (by default `target().first`) unless a request
 * names another caller. Both are functions, read at each request, as tests create the app (and
 * its projects) in `beforeAll`: `const { request, ok, get } = apiClient(() => test);`
 */
export function apiClient(
  target: () => ClientTarget,
  caller: () => Caller = () => target().first,
): ApiClient {
  const request = (method: Method, url: string, body?: unknown, as: Caller = caller()) =>
    target().app.inject({
      method,
      url,
      headers: as.headers,
      ...(body === undefined ? {} : { payload: body as InjectOptions['payload'] }),
    });
  return {
    request,
    async ok<Body = Json>(method: Method, url: string, body?: unknown, as?: Caller) {
      return expectJson<Body>(await request(method, url, body, as));
    },
    async get<Body = Json>(url: string, as?: Caller) {
      return expectJson<Body>(await request('GET', url, undefined, as), 200);
    },
  };
}
