import type { ErrorCode } from '@svc/protocol';

/**
 * An error the API answers with `{ error: message, code }` and `status`. Anything else that is
 * thrown becomes a masked `internal` 500 (see the error handler in app.ts).
 */
export class ApiError extends Error {
  readonly code: ErrorCode;
  readonly status: number;

  constructor(status: number, code: ErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'ApiError';
    this.status = status;
    this.code = code;
  }
}

/** 401: missing or invalid credentials. */
export function unauthorized(message: string): ApiError {
  return new ApiError(401, 'unauthorized', message);
}

/** 403: valid credentials that do not allow this (e.g. an origin the project does not allow). */
export function forbidden(message: string): ApiError {
  return new ApiError(403, 'unauthorized', message);
}

/** 404: no such resource, or one the credentials may not see (never "forbidden" across projects). */
export function notFound(message: string): ApiError {
  return new ApiError(404, 'not_found', message);
}

/** 400 (or 409/413/415/422/429 through `status`): the request is invalid and changed nothing. */
export function invalid(message: string, status = 400): ApiError {
  return new ApiError(status, 'invalid', message);
}
