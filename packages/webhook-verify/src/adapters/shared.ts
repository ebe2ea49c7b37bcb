/** Internal helpers shared by the adapters (not a public entry point). */
import { describeErrorCode, WebhookVerificationError } from '@svc/webhook-verify';

/**
 * The default body size limit of the adapters: 1 MiB (a webhook is a few KiB).
 *
 * @example
 * ```ts
 * import { DEFAULT_BODY_LIMIT } from '@svc/webhook-verify/node';
 *
 * DEFAULT_BODY_LIMIT; // 1048576
 * ```
 */
export const DEFAULT_BODY_LIMIT = 1_048_576;

/** The limit, validated (a programming error is a TypeError). */
export function readLimit(limit: number | undefined): number {
  const value = limit ?? DEFAULT_BODY_LIMIT;
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) {
    throw new TypeError(`limit must be a whole number of bytes >= 0, not ${String(value)}`);
  }
  return value;
}

/** The `payload_too_large` error. */
export function tooLarge(limit: number, detail: string): WebhookVerificationError {
  return new WebhookVerificationError({
    code: 'payload_too_large',
    message: `The request body ${detail}, more than the limit of ${limit} bytes. Raise the adapter's limit option if your webhooks are really this large.`,
  });
}

/** Whether a declared `Content-Length` is above `limit` (checked before reading anything). */
export function declaredLengthExceeds(contentLength: string | null | undefined, limit: number): boolean {
  if (contentLength === null || contentLength === undefined) return false;
  const trimmed = contentLength.trim();
  return /^\d+$/.test(trimmed) && Number(trimmed) > limit;
}

/**
 * The status and JSON body of an error response, `{ error, code }`. A verification error gets
 * its fixed public description (the detailed `message`, for logs, may hint at the receiver's
 * configuration); anything else is a masked 500.
 */
export function errorResponse(error: unknown): { status: number; body: { error: string; code: string } } {
  if (WebhookVerificationError.isInstance(error)) {
    return { status: error.status, body: { error: describeErrorCode(error.code), code: error.code } };
  }
  return { status: 500, body: { error: 'Internal Server Error', code: 'internal_error' } };
}

/** The body of a 405 answer. */
export const methodNotAllowed = { error: 'Webhooks are delivered with POST.', code: 'method_not_allowed' };

/** The message when the body was consumed by another parser before the adapter could read it. */
export const bodyAlreadyReadMessage =
  'The request body was already read by another body parser (such as a global express.json()) before the webhook was verified: the raw bytes the signature covers are gone. ' +
  'Register the webhook route before app.use(express.json()), or keep the raw bytes with express.json({ verify: keepRawBody }) (keepRawBody from @svc/webhook-verify/express).';
