import { WebhookVerificationError } from './errors.ts';
import type { HeadersLike, SignatureHeader } from './types.ts';

/**
 * The name of the signature header, lowercase (as Node reports it; HTTP names are
 * case-insensitive).
 *
 * @example
 * ```ts
 * import { SIGNATURE_HEADER_NAME } from '@svc/webhook-verify';
 *
 * const header = request.headers.get(SIGNATURE_HEADER_NAME);
 * ```
 */
export const SIGNATURE_HEADER_NAME = 'x-service-signature';

/**
 * Bounds checked before any cryptography, so an enormous or crafted header is rejected
 * (`malformed_header`) in time linear in at most `maxLength` characters: the header length, the
 * number of comma-separated parts, and the number of `v1` signatures (a rotation sends two).
 *
 * @example
 * ```ts
 * import { SIGNATURE_HEADER_LIMITS } from '@svc/webhook-verify';
 *
 * SIGNATURE_HEADER_LIMITS.maxLength; // 8192
 * ```
 */
export const SIGNATURE_HEADER_LIMITS = { maxLength: 8192, maxParts: 32, maxSignatures: 8 } as const;

/** `t`: Unix seconds, digits only, no leading zero (so the signed `<t>` is unambiguous). */
const timestampPattern = /^(?:0|[1-9][0-9]{0,14})$/;

/** A `v1` value we can match: 64 lowercase hex digits. Anything else never matches. */
const signaturePattern = /^[0-9a-f]{64}$/;

/** A parsed `X-Service-Signature` header. */
export interface ParsedSignatureHeader {
  /** `t` exactly as sent (the signed text starts with it). */
  timestamp: string;
  /** `t` as a number of seconds. */
  timestampSeconds: number;
  /** Every `v1` value that is 64 lowercase hex digits, in header order. */
  signatures: string[];
  /** How many `v1` values were not 64 lowercase hex digits (they can never match). */
  unusableSignatures: number;
}

function malformed(detail: string): WebhookVerificationError {
  return new WebhookVerificationError({
    code: 'malformed_header',
    message: `Malformed X-Service-Signature header: ${detail}. Expected t=<unix seconds>,v1=<64 lowercase hex digits>[,v1=<hex>]; pass the header value exactly as received.`,
  });
}

function missing(detail: string): WebhookVerificationError {
  return new WebhookVerificationError({
    code: 'missing_header',
    message: `Missing X-Service-Signature header: ${detail}. Pass request.headers (or the header's value) of the webhook request; a proxy in front of the receiver may have dropped the header.`,
  });
}

function isHeadersLike(value: object): value is HeadersLike {
  return typeof (value as { get?: unknown }).get === 'function';
}

function fromRecord(record: Readonly<Record<string, unknown>>): unknown {
  if (Object.hasOwn(record, SIGNATURE_HEADER_NAME)) return record[SIGNATURE_HEADER_NAME];
  for (const name of Object.keys(record)) {
    if (name.toLowerCase() === SIGNATURE_HEADER_NAME) return record[name];
  }
  return undefined;
}

/**
 * The header value from any accepted form: a string, several values (joined with `,` as HTTP
 * combines repeated fields), a `Headers`-like object or a header record.
 */
export function readSignatureHeader(input: SignatureHeader): string {
  let value: unknown = input;
  if (typeof value === 'object' && value !== null && !Array.isArray(value)) {
    value = isHeadersLike(value)
      ? value.get(SIGNATURE_HEADER_NAME)
      : fromRecord(value as Readonly<Record<string, unknown>>);
  }
  if (value === undefined || value === null) throw missing('no value');
  if (Array.isArray(value)) {
    if (!value.every((item) => typeof item === 'string')) throw malformed('not a string');
    // Bound the work before joining: an array of a million values is as malformed as a long string.
    if (value.length > SIGNATURE_HEADER_LIMITS.maxParts) {
      throw malformed(`sent ${value.length} times (at most ${SIGNATURE_HEADER_LIMITS.maxParts})`);
    }
    value = value.filter((item) => item.trim() !== '').join(',');
  }
  if (typeof value !== 'string') throw malformed(`not a string but ${typeof value}`);
  if (value.trim() === '') throw missing('the value is empty');
  return value;
}

/**
 * Parses `t=<unix s>,v1=<hex>[,v1=<hex>]` per PROTOCOL.md §6: spaces (and tabs) after commas
 * and around the whole value are tolerated; keys are case-sensitive; unknown schemes (`v0=`,
 * `v2=`, …) are ignored; `t` must appear exactly once, as digits without a leading zero; at
 * least one `v1` is required. Throws `malformed_header` otherwise, before any cryptography.
 */
export function parseSignatureHeader(header: string): ParsedSignatureHeader {
  if (header.length > SIGNATURE_HEADER_LIMITS.maxLength) {
    throw malformed(`${header.length} characters long (at most ${SIGNATURE_HEADER_LIMITS.maxLength})`);
  }
  const parts = header.trim().split(',');
  if (parts.length > SIGNATURE_HEADER_LIMITS.maxParts) {
    throw malformed(`${parts.length} comma-separated parts (at most ${SIGNATURE_HEADER_LIMITS.maxParts})`);
  }
  let timestamp: string | undefined;
  const signatures: string[] = [];
  let signatureCount = 0;
  let unusableSignatures = 0;
  const otherSchemes = new Set<string>();
  for (const rawPart of parts) {
    const first = rawPart.charCodeAt(0);
    const part = first === 0x20 || first === 0x09 ? rawPart.replace(/^[ \t]+/, '') : rawPart;
    const equals = part.indexOf('=');
    if (equals <= 0) throw malformed(part === '' ? 'an empty part' : 'a part that is not key=value');
    const key = part.slice(0, equals);
    const value = part.slice(equals + 1);
    if (key === 't') {
      if (timestamp !== undefined) throw malformed('t appears more than once');
      if (!timestampPattern.test(value)) {
        throw malformed('t is not a Unix time in whole seconds (digits only, no leading zero)');
      }
      timestamp = value;
    } else if (key === 'v1') {
      signatureCount++;
      if (signatureCount > SIGNATURE_HEADER_LIMITS.maxSignatures) {
        throw malformed(`more than ${SIGNATURE_HEADER_LIMITS.maxSignatures} v1 signatures`);
      }
      if (signaturePattern.test(value)) signatures.push(value);
      else unusableSignatures++;
    } else if (otherSchemes.size < 4 && /^[A-Za-z0-9_-]{1,16}$/.test(key)) {
      otherSchemes.add(key);
    }
  }
  if (timestamp === undefined) throw malformed('no t=<unix seconds>');
  if (signatureCount === 0) {
    const found = otherSchemes.size > 0 ? ` (found ${[...otherSchemes].join(', ')}, which are ignored)` : '';
    throw malformed(`no v1 signature${found}`);
  }
  return { timestamp, timestampSeconds: Number(timestamp), signatures, unusableSignatures };
}
