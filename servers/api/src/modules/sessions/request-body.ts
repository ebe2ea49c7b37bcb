import type { Readable } from 'node:stream';
import { PROTOCOL_LIMITS } from '@svc/protocol';

/**
 * The transfer encodings of an ingest body (`X-Service-Encoding`): `json+deflate` is a
 * zlib-wrapped deflate stream (what `CompressionStream('deflate')` produces) of the chunk's JSON,
 * `json` the JSON itself. A request without the header is `json`, like HTTP's identity encoding.
 */
const INGEST_ENCODINGS = ['json+deflate', 'json'] as const;

/** `json+deflate` | `json`. */
export type IngestEncoding = (typeof INGEST_ENCODINGS)[number];

/** The encoding of a request without `X-Service-Encoding`. */
const DEFAULT_INGEST_ENCODING: IngestEncoding = 'json';

/**
 * The largest body accepted as sent, per encoding: `PROTOCOL_LIMITS.maxCompressedBytes` (1 MiB)
 * for both, as the protocol states ("largest request body as sent, deflated or plain JSON").
 * A chunk larger than that as plain JSON must be sent deflated (the SDKs always deflate; plain
 * JSON is for tools and debugging). The inflated limit applies after inflating.
 */
export const INGEST_BODY_LIMITS: Readonly<Record<IngestEncoding, number>> = {
  'json+deflate': PROTOCOL_LIMITS.maxCompressedBytes,
  json: PROTOCOL_LIMITS.maxCompressedBytes,
};

/**
 * The media types accepted for each encoding (no `Content-Type` at all is accepted for both:
 * that is what `fetch` sends for a `Uint8Array` or an untyped `Blob` body). A deflated body is
 * binary, so it is never labelled `application/json`.
 */
const INGEST_CONTENT_TYPES: Readonly<Record<IngestEncoding, readonly string[]>> = {
  'json+deflate': ['application/octet-stream'],
  json: ['application/json', 'application/octet-stream'],
};

/** The encoding named by an `X-Service-Encoding` value, or `undefined` when it names none. */
export function parseIngestEncoding(header: string | undefined): IngestEncoding | undefined {
  if (header === undefined) return DEFAULT_INGEST_ENCODING;
  const value = header.trim().toLowerCase();
  return (INGEST_ENCODINGS as readonly string[]).includes(value) ? (value as IngestEncoding) : undefined;
}

/**
 * Why a `Content-Type` is not accepted for `encoding`, or `undefined` when it is.
 *
 * @example
 * ```ts
 * contentTypeProblem('json', 'application/json; charset=utf-8'); // undefined
 * contentTypeProblem('json+deflate', 'text/plain'); // 'Content-Type text/plain is not accepted …'
 * ```
 */
export function contentTypeProblem(encoding: IngestEncoding, header: string | undefined): string | undefined {
  if (header === undefined) return undefined;
  const [mediaType = '', ...parameters] = header.split(';').map((part) => part.trim().toLowerCase());
  const accepted = INGEST_CONTENT_TYPES[encoding];
  const expected = `${accepted.join(' or ')} (or no Content-Type)`;
  if (!accepted.includes(mediaType)) {
    return `Content-Type ${JSON.stringify(mediaType.slice(0, 100))} is not accepted with X-Service-Encoding ${encoding}: send ${expected}`;
  }
  for (const parameter of parameters) {
    const [name, value = ''] = parameter.split('=').map((part) => part.trim());
    if (name === 'charset' && value.replace(/"/g, '') !== 'utf-8') {
      return `Chunks are UTF-8 JSON: charset ${JSON.stringify(value.slice(0, 40))} is not accepted`;
    }
  }
  return undefined;
}

/** The result of {@link readBody}. */
export type ReadBodyResult = { success: true; body: Buffer } | { success: false; reason: 'too_large' };

/**
 * Reads a request body, counting bytes as they arrive: past `limit` it stops collecting at once
 * (the rest of the stream is discarded, never buffered) and answers `too_large`. Rejects when the
 * stream fails (client gone mid-body).
 *
 * @example
 * ```ts
 * const result = await readBody(request.raw, PROTOCOL_LIMITS.maxCompressedBytes);
 * if (!result.success) throw invalid('Body too large', 413);
 * ```
 */
export function readBody(stream: Readable, limit: number): Promise<ReadBodyResult> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let received = 0;
    const finish = () => {
      stream.removeListener('data', onData);
      stream.removeListener('end', onEnd);
      stream.removeListener('error', onError);
      stream.removeListener('aborted', onAborted);
    };
    const onData = (chunk: Buffer | string) => {
      const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
      received += bytes.byteLength;
      if (received > limit) {
        finish();
        chunks.length = 0;
        // Keep the stream flowing into nothing: the response goes out with `Connection: close`.
        stream.on('error', () => {});
        stream.resume();
        resolve({ success: false, reason: 'too_large' });
        return;
      }
      chunks.push(bytes);
    };
    const onEnd = () => {
      finish();
      resolve({ success: true, body: chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks) });
    };
    const onError = (error: Error) => {
      finish();
      reject(error);
    };
    const onAborted = () => onError(new Error('The client aborted the request body'));
    stream.on('data', onData);
    stream.on('end', onEnd);
    stream.on('error', onError);
    stream.on('aborted', onAborted);
    stream.resume();
  });
}
