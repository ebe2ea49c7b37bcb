/**
 * The verification algorithm shared by the Node and the WebCrypto build; each build supplies
 * the HMAC through a {@link SignatureCrypto}.
 */
import { WebhookVerificationError } from './errors.ts';
import { parseSignatureHeader, readSignatureHeader } from './header.ts';
import { parseEvent, toBody } from './payload.ts';
import type {
  RawBody,
  SignatureHeader,
  SignWebhook,
  SignWebhookOptions,
  VerifyWebhook,
  VerifyWebhookOptions,
  WebhookEvent,
  WebhookSecrets,
} from './types.ts';

/** The default of `toleranceSec`: PROTOCOL.md §6. */
export const DEFAULT_TOLERANCE_SEC = 300;

/** The HMAC-SHA256 of `<timestamp>.<body>` keyed with the UTF-8 bytes of a secret. */
export interface SignatureCrypto {
  /**
   * Whether one of `signatures` (64 lowercase hex digits each) is the HMAC with one of
   * `secrets`, compared in constant time.
   */
  matches(
    secrets: readonly string[],
    timestamp: string,
    body: string | Uint8Array,
    signatures: readonly string[],
  ): Promise<boolean> | boolean;
  /** The HMAC as lowercase hex. */
  sign(secret: string, timestamp: string, body: string | Uint8Array): Promise<string> | string;
}

function normalizeSecrets(secrets: WebhookSecrets): readonly string[] {
  const input: unknown = secrets;
  if (typeof input !== 'string' && !Array.isArray(input)) {
    throw new TypeError(
      `secrets must be the channel's signing secret (a whsec_… string) or an array of them, not ${input === null ? 'null' : typeof input}`,
    );
  }
  const list: readonly unknown[] = typeof input === 'string' ? [input] : input;
  if (list.length === 0) {
    throw new TypeError(
      "No webhook secret: pass the channel's signing secret (whsec_…), e.g. from an environment variable. An empty list would reject every delivery.",
    );
  }
  list.forEach((secret, index) => {
    if (typeof secret !== 'string' || secret === '') {
      const where = list.length > 1 ? `secrets[${index}]` : 'The secret';
      throw new TypeError(
        `${where} is ${secret === '' ? 'an empty string' : typeof secret}: is the environment variable holding the signing secret set?`,
      );
    }
  });
  return list as readonly string[];
}

function readTolerance(options: VerifyWebhookOptions | undefined): number {
  const tolerance = options?.toleranceSec ?? DEFAULT_TOLERANCE_SEC;
  if (typeof tolerance !== 'number' || Number.isNaN(tolerance) || tolerance < 0) {
    throw new TypeError(
      `toleranceSec must be a number of seconds >= 0 (or Infinity), not ${String(tolerance)}`,
    );
  }
  return tolerance;
}

function readNowMs(now: VerifyWebhookOptions['now']): number {
  if (now === undefined) return Date.now();
  const value = now instanceof Date ? now.getTime() : now;
  if (typeof value !== 'number' || !Number.isFinite(value)) {
    throw new TypeError('now must be a valid Date or a number of milliseconds since the Unix epoch');
  }
  return value;
}

function noMatch(secrets: readonly string[], unusableSignatures: number): WebhookVerificationError {
  const hints: string[] = [];
  if (unusableSignatures > 0) {
    hints.push(
      `${unusableSignatures} v1 value(s) are not 64 lowercase hex digits and cannot match (uppercase hex does not match, as with Stripe).`,
    );
  }
  const name = (index: number) => (secrets.length > 1 ? `secrets[${index}]` : 'The secret');
  secrets.forEach((secret, index) => {
    if (secret.trim() !== secret) {
      hints.push(
        `${name(index)} has leading or trailing whitespace (often a newline from an .env file or a shell): it is used as given, so trim it.`,
      );
    }
    if (!secret.trim().startsWith('whsec_')) {
      hints.push(
        `${name(index)} does not start with whsec_: use the signing secret shown when the channel was created (the whole string is the key, it is not decoded).`,
      );
    }
  });
  return new WebhookVerificationError({
    code: 'no_matching_signature',
    message: [
      'No v1 signature in the X-Service-Signature header matches the body with the configured secret(s).',
      'Check that you pass the raw request body exactly as received (not JSON parsed and serialised again, not re-encoded by a proxy) and the signing secret of this channel (during a rotation pass both secrets).',
      ...hints,
    ].join(' '),
  });
}

function checkTimestamp(timestampSeconds: number, toleranceSec: number, nowMs: number): void {
  const ageSec = Math.floor(nowMs / 1000) - timestampSeconds;
  if (ageSec > toleranceSec) {
    throw new WebhookVerificationError({
      code: 'timestamp_too_old',
      message: `The signature is valid but its timestamp is ${ageSec} s old, more than the tolerance of ${toleranceSec} s: a replayed or long-delayed delivery, or this machine's clock is behind (check NTP). Retries are signed afresh, so a live delivery is never this old.`,
    });
  }
  if (-ageSec > toleranceSec) {
    const milliseconds = timestampSeconds > 1e11 ? ' (t looks like milliseconds; it must be seconds)' : '';
    throw new WebhookVerificationError({
      code: 'timestamp_too_new',
      message: `The signature is valid but its timestamp is ${-ageSec} s in the future, more than the tolerance of ${toleranceSec} s${milliseconds}: this machine's clock is probably behind (check NTP).`,
    });
  }
}

/** `verifyWebhook` and `signWebhook` over one HMAC implementation. */
export function createWebhookFunctions(crypto: SignatureCrypto): {
  verifyWebhook: VerifyWebhook;
  signWebhook: SignWebhook;
} {
  async function verifyWebhook(
    rawBody: RawBody,
    signatureHeader: SignatureHeader,
    secrets: WebhookSecrets,
    options?: VerifyWebhookOptions,
  ): Promise<WebhookEvent> {
    const secretList = normalizeSecrets(secrets);
    const toleranceSec = readTolerance(options);
    const body = toBody(rawBody);
    const header = parseSignatureHeader(readSignatureHeader(signatureHeader));
    let matched =
      header.signatures.length > 0 && crypto.matches(secretList, header.timestamp, body, header.signatures);
    // The Node build answers synchronously: no extra turn of the event loop for it.
    if (typeof matched !== 'boolean') matched = await matched;
    if (!matched) throw noMatch(secretList, header.unusableSignatures);
    checkTimestamp(header.timestampSeconds, toleranceSec, readNowMs(options?.now));
    return parseEvent(body);
  }

  async function signWebhook(
    rawBody: RawBody,
    secrets: WebhookSecrets,
    options?: SignWebhookOptions,
  ): Promise<string> {
    const secretList = normalizeSecrets(secrets);
    const timestamp = options?.timestamp ?? Math.floor(Date.now() / 1000);
    if (!Number.isSafeInteger(timestamp) || timestamp < 0) {
      throw new TypeError(
        `timestamp must be a Unix time in whole seconds (an integer >= 0), not ${timestamp}`,
      );
    }
    let body: string | Uint8Array;
    try {
      body = toBody(rawBody);
    } catch (error) {
      throw new TypeError('rawBody must be the exact body to send: a string, Uint8Array or ArrayBuffer', {
        cause: error,
      });
    }
    const t = String(timestamp);
    const signatures = await Promise.all(secretList.map((secret) => crypto.sign(secret, t, body)));
    return `t=${t},${signatures.map((signature) => `v1=${signature}`).join(',')}`;
  }

  return { verifyWebhook, signWebhook };
}
