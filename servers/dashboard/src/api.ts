// The dashboard's only way to the server: the public REST API, with the session cookie (sent by
// the browser), the CSRF token on state-changing requests and the project in X-Service-Project
// (servers/api/README.md, Accounts). The CSRF token is kept in memory only: a reload asks
// GET /v1/me for it again.

/** An answer of the API other than 2xx: its status and its `{ error, code }`. */
export class ApiFailure extends Error {
  override name = 'ApiFailure';
  readonly status: number;
  readonly code: string;

  constructor(status: number, code: string, message: string) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

let csrfToken: string | undefined;
let projectId: string | undefined;

/** Remembers the CSRF token of the session (from the sign-in answer or GET /v1/me). */
export function rememberCsrfToken(token: string | undefined): void {
  csrfToken = token;
}

/** The project project-scoped requests act on (X-Service-Project). */
export function selectProject(id: string | undefined): void {
  projectId = id;
}

const SAFE = new Set(['GET', 'HEAD']);

/**
 * A request to the API: JSON in, JSON out; a non-2xx answer throws {@link ApiFailure} with the
 * server's message.
 */
export async function api<T>(method: string, path: string, body?: unknown): Promise<T> {
  const headers: Record<string, string> = { accept: 'application/json' };
  if (body !== undefined) headers['content-type'] = 'application/json';
  if (!SAFE.has(method) && csrfToken !== undefined) headers['x-service-csrf'] = csrfToken;
  if (projectId !== undefined) headers['x-service-project'] = projectId;
  const response = await fetch(path, {
    method,
    headers,
    credentials: 'same-origin',
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  if (response.status === 204) return undefined as T;
  const text = await response.text();
  const json = text === '' ? undefined : (JSON.parse(text) as unknown);
  if (!response.ok) {
    const failure = (json ?? {}) as { error?: string; code?: string };
    throw new ApiFailure(response.status, failure.code ?? 'internal', failure.error ?? response.statusText);
  }
  return json as T;
}

/**
 * A `GET` of the API whose answer is not JSON (an archived asset): the raw response, with the
 * session cookie and the project header as {@link api} sends them.
 */
export function apiGetRaw(path: string): Promise<Response> {
  const headers: Record<string, string> = {};
  if (projectId !== undefined) headers['x-service-project'] = projectId;
  return fetch(path, { headers, credentials: 'same-origin' });
}

export interface User {
  id: string;
  email: string;
  name?: string;
}

export interface Me {
  user: User;
  csrfToken: string;
  mfaEnabled: boolean;
}

export interface Organization {
  id: string;
  name: string;
  role: 'owner' | 'admin' | 'member' | 'viewer';
}

export interface Project {
  id: string;
  name: string;
  organizationId: string;
  /** Public: goes into the SDK's `init` and only allows ingest. */
  projectKey: string;
}

export interface Page<T> {
  items: T[];
  nextCursor?: string;
}
