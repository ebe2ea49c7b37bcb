import type { ErrorCode } from '@svc/protocol';

const marker = Symbol.for('@svc/api.ApiError');

/** What an {@link ApiError} answers: the HTTP status, the wire `code` and the message. */
export interface ApiErrorOptions {
  /** 400, 401, 403, 404, 409, 413, 415, 422, 429, ...: the status carries what `code` does not. */
  status: number;
  /** One of the spec's four: `unauthorized`, `not_found`, `invalid`, `internal`. */
  code: ErrorCode;
  /** Says what was wrong and how to fix it; never a secret. */
  message: string;
  cause?: unknown;
}

/**
 * An error the API answers with `{ error: message, code }` and `status`. Anything else that is
 * thrown becomes a masked `internal` 500 (see the error handler in app.ts).
 *
 * @example
 * ```ts
 * throw new ApiError({ status: 409, code: 'invalid', message: 'The channel is in use by 2 rules' });
 * ```
 */
export class ApiError extends Error {
  /** Marks instances for {@link ApiError.isInstance}, across copies of the module. */
  readonly [marker] = true;
  readonly code: ErrorCode;
  readonly status: number;

  constructor({ status, code, message, cause }: ApiErrorOptions) {
    super(message, cause === undefined ? undefined : { cause });
    this.name = 'ApiError';
    this.status = status;
    this.code = code;
  }

  /** Whether `value` is an ApiError (also one made by another copy of this module). */
  static isInstance(value: unknown): value is ApiError {
    return typeof value === 'object' && value !== null && (value as { [marker]?: unknown })[marker] === true;
  }
}

/** 401: missing or invalid credentials. */
export function unauthorized(message: string): ApiError {
  return new ApiError({ status: 401, code: 'unauthorized', message });
}

/** 403: valid credentials that do not allow this (e.g. an origin the project does not allow). */
export function forbidden(message: string): ApiError {
  return new ApiError({ status: 403, code: 'unauthorized', message });
}

/** 404: no such resource, or one the credentials may not see (never "forbidden" across projects). */
export function notFound(message: string): ApiError {
  return new ApiError({ status: 404, code: 'not_found', message });
}

/** 400 (or 409/413/415/422/429 through `status`): the request is invalid and changed nothing. */
export function invalid(message: string, status = 400): ApiError {
  return new ApiError({ status, code: 'invalid', message });
}
