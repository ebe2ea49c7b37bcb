import { createHash } from 'node:crypto';
import { inflate, inflateSync } from 'node:zlib';
import { type Chunk, type DroppedField, PROTOCOL_LIMITS, parseChunk, type SkippedEvent } from '@svc/protocol';
import { type Redaction, recheckCallPrivacy } from './call-privacy.ts';
import type { IngestEncoding } from './request-body.ts';

/** The result of {@link inflateBody}. */
export type InflateResult =
  | { success: true; bytes: Buffer }
  | { success: false; reason: 'too_large' | 'malformed'; message: string };

/**
 * Inflates a zlib-wrapped deflate body with a hard output limit: zlib stops and the buffers are
 * dropped as soon as the output passes `maxOutputLength`, so a deflate bomb costs at most that
 * much memory (plus one zlib chunk), whatever it would inflate to. Bodies above 8 KiB inflate on
 * libuv's thread pool.
 *
 * @example
 * ```ts
 * const result = await inflateBody(body, PROTOCOL_LIMITS.maxInflatedBytes);
 * if (!result.success) reply.code(result.reason === 'too_large' ? 413 : 400);
 * ```
 */
export function inflateBody(body: Uint8Array, maxOutputLength: number): Promise<InflateResult> {
  // Small bodies (most SDK chunks) inflate in tens of microseconds: on this thread that is
  // cheaper than a trip through the thread pool. Even a small bomb stops at the output limit.
  if (body.byteLength <= SYNC_INFLATE_MAX_BYTES) {
    try {
      return Promise.resolve({ success: true, bytes: inflateSync(body, { maxOutputLength }) });
    } catch (error) {
      return Promise.resolve(inflateFailure(error as Error, maxOutputLength));
    }
  }
  return new Promise((resolve) => {
    inflate(body, { maxOutputLength }, (error, bytes) => {
      resolve(error === null ? { success: true, bytes } : inflateFailure(error, maxOutputLength));
    });
  });
}

/**
 * Bodies up to this size are inflated on the event loop. At zlib's maximum ratio (about 1000:1)
 * 8 KiB inflate to at most 8 MiB, a few milliseconds of work; larger bodies go to the thread pool.
 */
const SYNC_INFLATE_MAX_BYTES = 8 * 1024;

function inflateFailure(error: Error, maxOutputLength: number): InflateResult {
  if ((error as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE') {
    return {
      success: false,
      reason: 'too_large',
      message: `The chunk inflates to more than ${maxOutputLength} bytes (PROTOCOL_LIMITS.maxInflatedBytes)`,
    };
  }
  return {
    success: false,
    reason: 'malformed',
    message: `The body is not valid zlib-wrapped deflate data (X-Service-Encoding: json+deflate): ${error.message}`,
  };
}

/** A chunk as received and as it is to be stored. */
export interface DecodedChunk {
  /**
   * The chunk's JSON bytes to store: exactly as the client sent them (inflated when it was
   * deflated), unless ingest dropped optional meta fields or the privacy re-check removed
   * something; then the chunk re-encoded (`JSON.stringify`) without them.
   */
  json: Uint8Array;
  /** Whether `json` is the client's bytes as sent (nothing dropped or redacted). */
  asSent: boolean;
  /**
   * SHA-256 of the chunk's JSON bytes exactly as sent: the same bytes sent again are a
   * duplicate, whatever ingest removed from them (and however the project's privacy mode changed).
   */
  contentSha256: Uint8Array;
  /** The validated chunk, as stored, without events of unknown types. */
  chunk: Chunk;
  /** Events of unknown types that were left out of `chunk.events` (still in `json`). */
  skipped: SkippedEvent[];
  /** Optional meta fields dropped because they were empty or malformed (not in `json`). */
  dropped: DroppedField[];
  /** What the privacy re-check removed, by rule (not in `json`). */
  redacted: Redaction[];
  encoding: IngestEncoding;
  /** The body as sent when it was `json+deflate` and `json` is as sent: a zlib stream that inflates to `json`. */
  deflated?: Uint8Array;
  /** Size of the body as sent. */
  receivedBytes: number;
}

/** How to decode: the project's privacy mode (`strict`: no SDP at all). */
export interface DecodeOptions {
  strictPrivacy: boolean;
  /** The query parameters a `request` event's URL may keep (the project's `privacy.requestQueryParams`). */
  requestQueryParams?: readonly string[];
}

/** The result of {@link decodeChunk}: a chunk, or the HTTP status and message to refuse it with. */
export type DecodeChunkResult =
  | { success: true; decoded: DecodedChunk }
  | { success: false; status: 400 | 413; message: string };

const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * Turns an ingest body into a validated chunk fit to store: inflates it (`json+deflate`, bounded
 * by `PROTOCOL_LIMITS.maxInflatedBytes`), decodes strict UTF-8, parses JSON, validates it with
 * `@svc/protocol`'s `parseChunk` (which drops empty or malformed optional meta fields) and
 * re-checks its call items against the privacy table ({@link recheckCallPrivacy}). The chunk is
 * re-encoded only when something was dropped or removed; otherwise `json` is the bytes as sent.
 * Never throws for bad input.
 *
 * @example
 * ```ts
 * const result = await decodeChunk(body, 'json+deflate', { strictPrivacy: settings.privacy.mode === 'strict' });
 * if (!result.success) throw invalid(result.message, result.status);
 * ```
 */
export async function decodeChunk(
  body: Uint8Array,
  encoding: IngestEncoding,
  options: DecodeOptions,
): Promise<DecodeChunkResult> {
  if (body.byteLength === 0)
    return { success: false, status: 400, message: 'The body is empty: send one chunk' };
  let json: Uint8Array = body;
  if (encoding === 'json+deflate') {
    const inflated = await inflateBody(body, PROTOCOL_LIMITS.maxInflatedBytes);
    if (!inflated.success) {
      return {
        success: false,
        status: inflated.reason === 'too_large' ? 413 : 400,
        message: inflated.message,
      };
    }
    json = inflated.bytes;
  } else if (body.byteLength > PROTOCOL_LIMITS.maxInflatedBytes) {
    return {
      success: false,
      status: 413,
      message: `The chunk is larger than ${PROTOCOL_LIMITS.maxInflatedBytes} bytes (PROTOCOL_LIMITS.maxInflatedBytes)`,
    };
  }

  // A zlib stream starts with 0x78: most likely a deflated body sent without its encoding.
  const hint =
    encoding === 'json' && body[0] === 0x78
      ? ' (a deflated body needs X-Service-Encoding: json+deflate)'
      : '';
  let text: string;
  try {
    text = utf8.decode(json);
  } catch {
    return { success: false, status: 400, message: `The chunk is not valid UTF-8${hint}` };
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return {
      success: false,
      status: 400,
      message: `The chunk is not valid JSON: ${(error as Error).message.slice(0, 200)}${hint}`,
    };
  }

  const parsed = parseChunk(value);
  if (!parsed.success) return { success: false, status: 400, message: parsed.error.message };
  const contentSha256 = createHash('sha256').update(json).digest();
  const { input, dropped } = parsed;
  const privacy = recheckCallPrivacy(input.events, {
    strict: options.strictPrivacy,
    ...(options.requestQueryParams === undefined ? {} : { requestQueryParams: options.requestQueryParams }),
  });
  const common = {
    contentSha256,
    dropped,
    redacted: privacy.redacted,
    encoding,
    receivedBytes: body.byteLength,
  };
  if (dropped.length === 0 && privacy.redacted.length === 0) {
    return {
      success: true,
      decoded: {
        ...common,
        json,
        asSent: true,
        chunk: parsed.chunk,
        skipped: parsed.skipped,
        ...(encoding === 'json+deflate' ? { deflated: body } : {}),
      },
    };
  }
  const kept =
    privacy.redacted.length === 0 ? input : { ...input, events: privacy.events as typeof input.events };
  // What the privacy re-check changed is parsed again, so the indexed chunk (event positions
  // included, when whole events went) is exactly the stored one.
  const stored = privacy.redacted.length === 0 ? parsed : parseChunk(kept);
  if (!stored.success) throw new Error(`The redacted chunk no longer validates: ${stored.error.message}`);
  return {
    success: true,
    decoded: {
      ...common,
      json: Buffer.from(JSON.stringify(kept)),
      asSent: false,
      chunk: stored.chunk,
      skipped: stored.skipped,
    },
  };
}
