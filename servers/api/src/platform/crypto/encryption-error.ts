/**
 * Why an encryption operation failed:
 *
 * - `invalid_master_key`: the master key (`SVC_MASTER_KEY` or the key file) is missing, not the
 *   base64 of 32 bytes, or the key file is readable by group or others;
 * - `wrong_key`: a wrapped data key was wrapped by another master key than the loaded one;
 * - `corrupt`: a wrapped key or sealed blob is truncated or was modified, or a blob was opened
 *   with the wrong data key or associated data (AES-GCM cannot tell these apart);
 * - `unsupported_version`: the first byte names a format this server does not know.
 *
 * @example
 * ```ts
 * const operatorMistake = (code: EncryptionErrorCode) => code === 'invalid_master_key' || code === 'wrong_key';
 * ```
 */
export type EncryptionErrorCode = 'invalid_master_key' | 'wrong_key' | 'corrupt' | 'unsupported_version';

const marker = Symbol.for('@svc/api.EncryptionError');

/**
 * The error of the encryption-at-rest module. Its `message` says what is wrong and how to fix a
 * configuration mistake; it never contains key material.
 *
 * @example
 * ```ts
 * try {
 *   const chunk = openBlob(dataKey, sealed, `${projectId}/${sessionId}/${seq}`);
 * } catch (error) {
 *   if (EncryptionError.isInstance(error)) log.error({ code: error.code }, error.message);
 *   throw error;
 * }
 * ```
 */
export class EncryptionError extends Error {
  /** Brand checked by {@link EncryptionError.isInstance}; `Symbol.for`, so it survives duplicated copies. */
  readonly [marker] = true;

  /** Why the operation failed. */
  readonly code: EncryptionErrorCode;

  /**
   * @example
   * ```ts
   * throw new EncryptionError({ code: 'corrupt', message: 'The sealed blob is truncated' });
   * ```
   */
  constructor({ code, message, cause }: { code: EncryptionErrorCode; message: string; cause?: unknown }) {
    super(message, cause === undefined ? undefined : { cause });
    this.name = 'EncryptionError';
    this.code = code;
  }

  /**
   * Whether `error` is an `EncryptionError`, also across duplicated copies of this module.
   *
   * @example
   * ```ts
   * if (EncryptionError.isInstance(error) && error.code === 'wrong_key') process.exitCode = 78;
   * ```
   */
  static isInstance(error: unknown): error is EncryptionError {
    return typeof error === 'object' && error !== null && marker in error && error[marker] === true;
  }
}
