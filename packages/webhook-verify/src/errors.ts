/**
 * Why a delivery was rejected:
 *
 * - `missing_header`: no `X-Service-Signature` header;
 * - `malformed_header`: the header is not `t=<unix s>,v1=<hex>[,v1=<hex>]` (no or duplicated `t`,
 *   `t` not digits, no `v1`, too long, too many signatures);
 * - `no_matching_signature`: no `v1` is the HMAC of this body with any of the secrets (a
 *   tampered or re-serialised body, the wrong secret, uppercase hex);
 * - `timestamp_too_old` / `timestamp_too_new`: the signature is valid but `t` is more than the
 *   tolerance (300 s) before / after now (a replay, or a wrong clock);
 * - `invalid_payload`: the raw body is not raw bytes or a string (a parsed object was passed), or
 *   the signed body is not a webhook event (not UTF-8 JSON, or no `id`, `type`, `data`);
 * - `payload_too_large`: the body exceeds the adapters' size limit (adapters only).
 *
 * @example
 * ```ts
 * const retryable = (code: WebhookVerificationErrorCode) => code === 'timestamp_too_new';
 * ```
 */
export type WebhookVerificationErrorCode =
  | 'missing_header'
  | 'malformed_header'
  | 'timestamp_too_old'
  | 'timestamp_too_new'
  | 'no_matching_signature'
  | 'invalid_payload'
  | 'payload_too_large';

/**
 * Every {@link WebhookVerificationErrorCode}, in the order of the README.
 *
 * @example
 * ```ts
 * import { WEBHOOK_VERIFICATION_ERROR_CODES } from '@svc/webhook-verify';
 *
 * WEBHOOK_VERIFICATION_ERROR_CODES.includes('missing_header'); // true
 * ```
 */
export const WEBHOOK_VERIFICATION_ERROR_CODES: readonly WebhookVerificationErrorCode[] = [
  'missing_header',
  'malformed_header',
  'timestamp_too_old',
  'timestamp_too_new',
  'no_matching_signature',
  'invalid_payload',
  'payload_too_large',
];

const marker = Symbol.for('@svc/webhook-verify.WebhookVerificationError');

/**
 * The one error `verifyWebhook` and the adapters throw for a delivery that must be rejected.
 * `message` says what was wrong and how to fix the usual mistake; it never contains a secret.
 * `status` is the HTTP status the adapters answer with (400, or 413 for `payload_too_large`).
 *
 * Programming errors (no secret configured, an invalid option) are `TypeError`s instead: they
 * are not the sender's fault and should surface as a 500.
 *
 * @example
 * ```ts
 * import { verifyWebhook, WebhookVerificationError } from '@svc/webhook-verify';
 *
 * try {
 *   const event = await verifyWebhook(rawBody, signatureHeader, secret);
 * } catch (error) {
 *   if (WebhookVerificationError.isInstance(error)) return reply.status(error.status).send({ error: error.message, code: error.code });
 *   throw error;
 * }
 * ```
 */
export class WebhookVerificationError extends Error {
  /** Marks instances for `isInstance`, across copies of the package. */
  readonly [marker] = true;

  /** Why the delivery was rejected. */
  readonly code: WebhookVerificationErrorCode;

  /** The HTTP status to answer with: 413 for `payload_too_large`, 400 otherwise. */
  readonly status: 400 | 413;

  /**
   * @example
   * ```ts
   * throw new WebhookVerificationError({ code: 'missing_header', message: 'No X-Service-Signature header' });
   * ```
   */
  constructor({
    code,
    message,
    cause,
  }: {
    code: WebhookVerificationErrorCode;
    message: string;
    cause?: unknown;
  }) {
    super(message, cause === undefined ? undefined : { cause });
    this.name = 'WebhookVerificationError';
    this.code = code;
    this.status = code === 'payload_too_large' ? 413 : 400;
  }

  /**
   * Whether `error` is a `WebhookVerificationError`, also when it comes from another copy of
   * this package (`instanceof` is not reliable across duplicated installs).
   *
   * @example
   * ```ts
   * if (WebhookVerificationError.isInstance(error)) console.warn(error.code);
   * ```
   */
  static isInstance(error: unknown): error is WebhookVerificationError {
    return typeof error === 'object' && error !== null && marker in error && error[marker] === true;
  }
}

/**
 * A fixed, public description of each code, for HTTP error bodies: unlike `message`, it never
 * reveals anything about the receiver's configuration (whether a secret has whitespace, ...).
 *
 * @example
 * ```ts
 * import { describeErrorCode } from '@svc/webhook-verify';
 *
 * describeErrorCode('missing_header'); // 'The X-Service-Signature header is missing.'
 * ```
 */
export function describeErrorCode(code: WebhookVerificationErrorCode): string {
  return publicDescriptions[code];
}

const publicDescriptions: Record<WebhookVerificationErrorCode, string> = {
  missing_header: 'The X-Service-Signature header is missing.',
  malformed_header: 'The X-Service-Signature header is not of the form t=<unix seconds>,v1=<hex>[,v1=<hex>].',
  timestamp_too_old: 'The signature timestamp is too far in the past.',
  timestamp_too_new: 'The signature timestamp is too far in the future.',
  no_matching_signature: 'No signature matches the request body.',
  invalid_payload: 'The request body is not a webhook event.',
  payload_too_large: 'The request body is too large.',
};
