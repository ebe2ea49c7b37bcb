import { readdir, readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { constants, createDeflate, deflateSync } from 'node:zlib';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import type { Kysely } from 'kysely';
import { ulid } from 'ulid';
import type { Database } from '../src/platform/database/schema.ts';

const require = createRequire(import.meta.url);

/** The bytes of a valid protocol fixture, exactly as the file holds them. */
export async function validChunkFixture(
  name: 'recording-seq-0' | 'recording-seq-1' | 'call',
): Promise<Buffer> {
  return readFile(require.resolve(`@svc/protocol/fixtures/valid/Chunk/${name}.json`));
}

/** The `Chunk` entries of the protocol's invalid catalogue: `{ name, reason, value }`. */
export async function invalidChunkCatalogue(): Promise<
  Array<{ name: string; reason: string; value: unknown }>
> {
  const entries = JSON.parse(
    await readFile(require.resolve('@svc/protocol/fixtures/invalid/catalogue.json'), 'utf8'),
  ) as Array<{ name: string; reason: string; schema: string; value: unknown }>;
  return entries.filter((entry) => entry.schema === 'Chunk');
}

/** A new, valid session id. */
export function newSessionId(): string {
  return `ses_${ulid()}`;
}

/** A chunk's JSON with another session id (and optionally other top-level fields), re-serialized. */
export function rewriteChunk(bytes: Uint8Array, changes: Record<string, unknown>): Buffer {
  const chunk = JSON.parse(Buffer.from(bytes).toString('utf8')) as Record<string, unknown>;
  return Buffer.from(JSON.stringify({ ...chunk, ...changes }));
}

/** zlib-wrapped deflate, what `CompressionStream('deflate')` produces. */
export function deflate(bytes: Uint8Array): Buffer {
  return deflateSync(bytes);
}

export interface PostChunkOptions {
  /** `X-Service-Encoding`; `null` leaves the header out. Default `json+deflate` (and the body is deflated). */
  encoding?: string | null;
  /** Send `body` as is, without deflating it for `json+deflate`. */
  raw?: boolean;
  contentType?: string;
  origin?: string;
  /** `X-Service-Project-Key`; `null` leaves it out. */
  projectKey?: string | null;
  headers?: Record<string, string>;
}

/** `POST /v1/ingest` through `app.inject`. */
export function postChunk(
  app: FastifyInstance,
  projectKey: string,
  body: Uint8Array,
  options: PostChunkOptions = {},
): Promise<LightMyRequestResponse> {
  const encoding = options.encoding === undefined ? 'json+deflate' : options.encoding;
  const deflated = encoding?.toLowerCase() === 'json+deflate' && options.raw !== true;
  const payload = deflated ? deflate(body) : Buffer.from(body);
  const key = options.projectKey === undefined ? projectKey : options.projectKey;
  const headers: Record<string, string> = { ...options.headers };
  if (key !== null) headers['x-service-project-key'] = key;
  if (encoding !== null) headers['x-service-encoding'] = encoding;
  if (options.contentType !== undefined) headers['content-type'] = options.contentType;
  if (options.origin !== undefined) headers.origin = options.origin;
  return app.inject({ method: 'POST', url: '/v1/ingest', headers, payload });
}

/** Every file under `directory` (relative paths), temporary files of the blob store included. */
export async function listFiles(directory: string): Promise<string[]> {
  const entries = await readdir(directory, { recursive: true, withFileTypes: true }).catch(() => []);
  return entries
    .filter((entry) => entry.isFile())
    .map((entry) => join(entry.parentPath, entry.name).slice(directory.length + 1))
    .sort();
}

/** What ingest stored: row counts and the blob files under `<dataDirectory>/blobs`. */
export async function storedState(database: Kysely<Database>, dataDirectory: string) {
  const count = async (table: 'sessions' | 'chunks' | 'session_signals') =>
    Number(
      (
        await database
          .selectFrom(table)
          .select((expression) => expression.fn.countAll<number>().as('count'))
          .executeTakeFirstOrThrow()
      ).count,
    );
  return {
    sessions: await count('sessions'),
    chunks: await count('chunks'),
    signals: await count('session_signals'),
    blobs: await listFiles(join(dataDirectory, 'blobs')),
  };
}

let bomb: Promise<Buffer> | undefined;

/**
 * A deflate bomb: 10^9 zero bytes (1 GB), zlib-wrapped deflate at level 9, about 1 MB, which
 * fits the compressed body limit. Built once per test file (about a second).
 */
export function deflateBomb(): Promise<Buffer> {
  bomb ??= new Promise((resolve, reject) => {
    const deflater = createDeflate({ level: constants.Z_BEST_COMPRESSION, memLevel: 9 });
    const parts: Buffer[] = [];
    deflater.on('data', (part: Buffer) => parts.push(part));
    deflater.on('end', () => resolve(Buffer.concat(parts)));
    deflater.on('error', reject);
    const zeros = Buffer.alloc(1_000_000);
    let written = 0;
    const write = () => {
      while (written < 1_000) {
        written += 1;
        if (!deflater.write(zeros)) {
          deflater.once('drain', write);
          return;
        }
      }
      deflater.end();
    };
    write();
  });
  return bomb;
}

/**
 * A pino logger option for `createTestApp` that keeps every JSON line the app writes in
 * `lines` (level info and up).
 */
export function captureLogs() {
  const lines: Array<Record<string, unknown>> = [];
  const stream = new Writable({
    write(chunk, _encoding, done) {
      for (const line of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(line));
      done();
    },
  });
  return { lines, logger: { level: 'info', stream } };
}
