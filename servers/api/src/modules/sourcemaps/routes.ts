import { createHash } from 'node:crypto';
import multipart from '@fastify/multipart';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { NewSourcemapFile, SourcemapFile } from '../../platform/database/tables/sourcemaps.table.ts';
import { decodeRecordCursor, encodeIdCursor } from '../../platform/http/cursor.ts';
import { ApiError, invalid } from '../../platform/http/errors.ts';
import { keysetPage } from '../../platform/http/keyset-page.ts';
import { integerParameter } from '../../platform/http/query.ts';
import { createId } from '../../platform/ids.ts';
import { bundleDebugId, checkSourceMap, fileUrl } from './files.ts';
import { findSourcemapFilesPage, insertSourcemapFiles } from './repository.ts';
import { stackFrames } from './symbolicate.ts';

/** Limits of `POST /v1/sourcemaps`, enforced while the body streams in. */
export interface SourcemapLimits {
  /** Bytes of one file (default 16 MiB): a larger one is refused with 413 before it is read whole. */
  maxFileBytes: number;
  /** Files in one upload (default 200). */
  maxFiles: number;
  /** Bytes of all the files of one upload (default 128 MiB). */
  maxUploadBytes: number;
}

const DEFAULT_LIMITS: SourcemapLimits = {
  maxFileBytes: 16 * 1024 * 1024,
  maxFiles: 200,
  maxUploadBytes: 128 * 1024 * 1024,
};

const MAX_LIST_LIMIT = 200;
const MAX_FRAMES = 200;
const releaseSchema = z.string().trim().min(1).max(128);
const URL_PREFIX = /^(?:~|https?:\/\/[^/\s]+)?\/[\w.\-/@+~]*$/;

const fileSchema = z.object({
  id: z.string(),
  release: z.string().optional(),
  /** The URL prefix joined with the file's name; `~` stands for any origin. */
  url: z.string(),
  kind: z.enum(['bundle', 'map']),
  debugId: z.string().optional(),
  size: z.int(),
  sha256: z.string(),
  uploadedBy: z.string().optional(),
  createdAt: z.iso.datetime(),
});

const frameSchema = z.object({
  file: z.string().max(2048).optional(),
  line: z.int().min(1).optional(),
  column: z.int().min(1).optional(),
  function: z.string().max(512).optional(),
});

const outputFrameSchema = frameSchema.extend({
  mapped: z.boolean(),
  generated: frameSchema.optional(),
  context: z.object({ before: z.array(z.string()), line: z.string(), after: z.array(z.string()) }).optional(),
});

const symbolicateBodySchema = z.union([
  z.strictObject({
    release: releaseSchema.optional(),
    stack: z
      .string()
      .min(1)
      .max(256 * 1024),
  }),
  z.strictObject({ release: releaseSchema.optional(), frames: z.array(frameSchema).min(1).max(MAX_FRAMES) }),
]);

const symbolicateQuerySchema = z.strictObject({
  release: releaseSchema.optional(),
  stack: z
    .string()
    .min(1)
    .max(16 * 1024)
    .optional(),
  file: z.string().max(2048).optional(),
  line: integerParameter(1, 2 ** 31 - 1).optional(),
  column: integerParameter(1, 2 ** 31 - 1).optional(),
  function: z.string().max(512).optional(),
});

function toFileView(row: SourcemapFile): z.infer<typeof fileSchema> {
  return {
    id: row.id,
    ...(row.release === null ? {} : { release: row.release }),
    url: row.url,
    kind: row.kind,
    ...(row.debug_id === null ? {} : { debugId: row.debug_id }),
    size: row.size,
    sha256: row.sha256,
    ...(row.uploaded_by === null ? {} : { uploadedBy: row.uploaded_by }),
    createdAt: new Date(row.created_at).toISOString(),
  };
}

function tooLarge(message: string): ApiError {
  return invalid(message, 413);
}

/** A file of an upload, read and checked, before anything is stored. */
interface ReceivedFile {
  row: Omit<NewSourcemapFile, 'release' | 'url'> & { name: string };
  bytes: Buffer;
}

/**
 * `/v1/sourcemaps` (upload and list bundles and their source maps) and `/v1/symbolicate` (map
 * minified frames to original source). Area `sourcemaps`: reading takes `sourcemaps:read`,
 * uploading `sourcemaps:write`. Bytes go to the blob store, rows to `sourcemap_files`.
 */
export default async function sourcemapRoutes(fastify: FastifyInstance, options: Partial<SourcemapLimits>) {
  const limits: SourcemapLimits = { ...DEFAULT_LIMITS, ...options };
  const routes = fastify.withTypeProvider<ZodTypeProvider>();
  routes.addHook('onRequest', fastify.authorize('sourcemaps'));
  await fastify.register(multipart, {
    // A part's file name may hold folders (`assets/index-4f2a.js`): busboy keeps only the base
    // name unless told otherwise, and `fileUrl` refuses the unsafe ones (`..`, absolute).
    preservePath: true,
    limits: {
      fileSize: limits.maxFileBytes,
      files: limits.maxFiles,
      fields: 10,
      fieldSize: 1024,
      parts: limits.maxFiles + 10,
    },
  });
  const { database, blobStore, symbolicator } = fastify;

  async function readUpload(request: FastifyRequest) {
    if (!request.isMultipart()) throw invalid('Send the files as multipart/form-data', 415);
    const fields: Record<string, string> = {};
    const files: ReceivedFile[] = [];
    let total = 0;
    try {
      for await (const part of request.parts()) {
        if (part.type === 'field') {
          if (typeof part.value === 'string') fields[part.fieldname] = part.value;
          continue;
        }
        const bytes = await part.toBuffer();
        total += bytes.length;
        if (total > limits.maxUploadBytes)
          throw tooLarge(`The upload is over ${limits.maxUploadBytes} bytes; send it in several uploads`);
        const name = part.filename;
        const kind = name.endsWith('.map') ? 'map' : /\.(?:m|c)?js$/.test(name) ? 'bundle' : undefined;
        if (kind === undefined) throw invalid(`"${name}" is neither a .js bundle nor a .map source map`);
        const text = bytes.toString('utf8');
        let debugId: string | undefined;
        if (kind === 'map') {
          const checked = checkSourceMap(text);
          if (!checked.ok)
            throw new ApiError({
              status: 400,
              code: 'invalid',
              message: `The source map "${name}" ${checked.message} (${checked.reason})`,
            });
          debugId = checked.debugId;
        } else {
          debugId = bundleDebugId(text);
        }
        files.push({
          bytes,
          row: {
            id: createId('smf'),
            name,
            project_id: request.auth.project.id,
            kind,
            debug_id: debugId ?? null,
            size: bytes.length,
            sha256: createHash('sha256').update(bytes).digest('hex'),
            blob_key: '',
            uploaded_by: request.auth.caller.id,
          },
        });
      }
    } catch (error) {
      if ((error as { code?: string }).code === 'FST_REQ_FILE_TOO_LARGE')
        throw tooLarge(`A file is over ${limits.maxFileBytes} bytes; nothing was stored`);
      if ((error as { code?: string }).code === 'FST_FILES_LIMIT')
        throw tooLarge(`An upload holds at most ${limits.maxFiles} files; nothing was stored`);
      throw error;
    }
    return { fields, files };
  }

  routes.post(
    '/v1/sourcemaps',
    {
      schema: {
        tags: ['sourcemaps'],
        summary: 'Upload bundles and source maps (multipart: files, and the fields release and urlPrefix)',
        response: { 201: z.object({ release: z.string().optional(), items: z.array(fileSchema) }) },
      },
    },
    async (request, reply) => {
      const { fields, files } = await readUpload(request);
      const release =
        fields.release === undefined || fields.release.trim() === '' ? undefined : fields.release.trim();
      if (release !== undefined && !releaseSchema.safeParse(release).success)
        throw invalid('release is at most 128 characters');
      const prefix = fields.urlPrefix ?? '~/';
      if (!URL_PREFIX.test(prefix) || prefix.length > 512)
        throw invalid('urlPrefix is a path such as ~/static/js/ (~: any origin) or https://host/path/');
      if (files.length === 0) throw invalid('The upload holds no files');
      const rows: NewSourcemapFile[] = files.map(({ row }) => {
        const url = fileUrl(prefix, row.name);
        if (url === undefined) throw invalid(`"${row.name}" is not a plain relative file name`);
        const { name: _name, ...rest } = row;
        return { ...rest, release: release ?? null, url, blob_key: `sourcemaps/${row.project_id}/${row.id}` };
      });
      const stored: string[] = [];
      try {
        for (const [index, row] of rows.entries()) {
          await blobStore.put(row.blob_key, (files[index] as ReceivedFile).bytes);
          stored.push(row.blob_key);
        }
        await insertSourcemapFiles(database, rows);
      } catch (error) {
        await Promise.allSettled(stored.map((key) => blobStore.delete(key)));
        throw error;
      }
      const now = new Date();
      return reply.code(201).send({
        ...(release === undefined ? {} : { release }),
        items: rows.map((row) => toFileView({ ...row, created_at: now } as SourcemapFile)),
      });
    },
  );

  routes.get(
    '/v1/sourcemaps',
    {
      schema: {
        tags: ['sourcemaps'],
        summary: 'Uploaded bundles and source maps, newest first',
        querystring: z.strictObject({
          release: releaseSchema.optional(),
          limit: integerParameter(1, MAX_LIST_LIMIT).optional(),
          cursor: z.string().max(256).optional(),
        }),
        response: { 200: z.object({ items: z.array(fileSchema), nextCursor: z.string().optional() }) },
      },
    },
    async (request) => {
      const limit = request.query.limit ?? 50;
      const rows = await findSourcemapFilesPage(database, request.auth.project.id, {
        ...(request.query.release === undefined ? {} : { release: request.query.release }),
        ...(request.query.cursor === undefined
          ? {}
          : { before: decodeRecordCursor(request.query.cursor, 'smf') }),
        limit: limit + 1,
      });
      const { page, more } = keysetPage(rows, limit);
      return {
        items: page.map(toFileView),
        ...(more === undefined ? {} : { nextCursor: encodeIdCursor(more.id) }),
      };
    },
  );

  const symbolicateResponse = { 200: z.object({ frames: z.array(outputFrameSchema) }) };

  routes.post(
    '/v1/symbolicate',
    {
      config: { scope: 'sourcemaps:read' },
      schema: {
        tags: ['sourcemaps'],
        summary: 'Map a stack or frames to original source',
        body: symbolicateBodySchema,
        response: symbolicateResponse,
      },
    },
    async (request) => {
      const body = request.body;
      const frames = 'stack' in body ? stackFrames(body.stack).slice(0, MAX_FRAMES) : body.frames;
      return { frames: await symbolicator.symbolicate(request.auth.project.id, body.release, frames) };
    },
  );

  routes.get(
    '/v1/symbolicate',
    {
      schema: {
        tags: ['sourcemaps'],
        summary: 'Map a stack (stack=) or one frame (file, line, column) to original source',
        querystring: symbolicateQuerySchema,
        response: symbolicateResponse,
      },
    },
    async (request) => {
      const { release, stack, ...frame } = request.query;
      if (stack === undefined && frame.file === undefined)
        throw invalid('Send stack, or file with line and column');
      const frames = stack !== undefined ? stackFrames(stack).slice(0, MAX_FRAMES) : [frame];
      return { frames: await symbolicator.symbolicate(request.auth.project.id, release, frames) };
    },
  );
}
