/**
 * Why an injection or an upload failed:
 *
 * - `invalid_options`: a required option is missing or malformed (no `url`, a `url` that is not
 *   http(s), an empty directory name);
 * - `no_files`: the directory holds no bundle with a source map to upload;
 * - `invalid_map`: a source map is not a JSON object (it cannot carry a debug id);
 * - `unauthorized`: the server answered 401 or 403 (a wrong token, or one without the scope
 *   `sourcemaps:write`);
 * - `rejected`: the server refused the upload with another 4xx (a file over 16 MiB, more than 200
 *   files, a map it cannot read); its message says which file and why;
 * - `server_error`: the server answered 5xx, after the retries;
 * - `network_error`: no answer (connection refused, DNS, timeout), after the retries.
 *
 * @example
 * ```ts
 * const worthRetrying = (code: SourcemapsErrorCode) => code === 'server_error' || code === 'network_error';
 * ```
 */
export type SourcemapsErrorCode =
  | 'invalid_options'
  | 'no_files'
  | 'invalid_map'
  | 'unauthorized'
  | 'rejected'
  | 'server_error'
  | 'network_error';

const marker = Symbol.for('@svc/sourcemaps.SourcemapsError');

/**
 * The one error this package throws. `message` says what failed and what to do; it never
 * contains the token. `status` is the server's HTTP status, when there was an answer.
 *
 * @example
 * ```ts
 * import { SourcemapsError, uploadSourcemaps } from '@svc/sourcemaps';
 *
 * try {
 *   await uploadSourcemaps({ url, token, files });
 * } catch (error) {
 *   if (SourcemapsError.isInstance(error) && error.code === 'unauthorized') console.error('Check SVC_API_TOKEN');
 *   throw error;
 * }
 * ```
 */
export class SourcemapsError extends Error {
  /** Marks instances for `isInstance`, across copies of the package. */
  readonly [marker] = true;

  /** Why it failed. */
  readonly code: SourcemapsErrorCode;

  /** The HTTP status of the server's answer, if there was one. */
  readonly status: number | undefined;

  /**
   * @example
   * ```ts
   * throw new SourcemapsError({ code: 'invalid_options', message: 'url is required' });
   * ```
   */
  constructor({
    code,
    message,
    status,
    cause,
  }: {
    code: SourcemapsErrorCode;
    message: string;
    status?: number;
    cause?: unknown;
  }) {
    super(message, cause === undefined ? undefined : { cause });
    this.name = 'SourcemapsError';
    this.code = code;
    this.status = status;
  }

  /**
   * Whether `error` is a `SourcemapsError`, also when it comes from another copy of this package.
   *
   * @example
   * ```ts
   * if (SourcemapsError.isInstance(error)) console.warn(error.code);
   * ```
   */
  static isInstance(error: unknown): error is SourcemapsError {
    return typeof error === 'object' && error !== null && marker in error && error[marker] === true;
  }
}
