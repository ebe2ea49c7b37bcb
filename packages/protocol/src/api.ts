import { z } from 'zod';
import { PROTOCOL_LIMITS } from './limits.ts';

/**
 * The error codes of the REST API's error body.
 *
 * @example
 * ```ts
 * ERROR_CODES.includes('not_found'); // true
 * ```
 */
export const ERROR_CODES = ['unauthorized', 'not_found', 'invalid', 'internal'] as const;

/**
 * An error code: `unauthorized` | `not_found` | `invalid` | `internal`.
 *
 * @example
 * ```ts
 * const code: ErrorCode = 'invalid';
 * ```
 */
export type ErrorCode = (typeof ERROR_CODES)[number];

/**
 * An error code as a schema.
 *
 * @example
 * ```ts
 * errorCodeSchema.parse('internal');
 * ```
 */
export const errorCodeSchema = z.enum(ERROR_CODES);

/**
 * The body of every error response: `{ error, code }`, `error` human readable.
 *
 * @example
 * ```ts
 * import { errorBodySchema } from '@svc/protocol';
 *
 * const body = errorBodySchema.parse(await response.json());
 * if (body.code === 'unauthorized') await signIn();
 * ```
 */
export const errorBodySchema = z.object({
  error: z.string().min(1).max(PROTOCOL_LIMITS.maxMessageLength),
  code: errorCodeSchema,
});

/**
 * An error body.
 *
 * @example
 * ```ts
 * const body: ErrorBody = { error: 'Session not found', code: 'not_found' };
 * ```
 */
export type ErrorBody = z.infer<typeof errorBodySchema>;

/**
 * The schema of one page of a list: `{ items, nextCursor? }`. `nextCursor` is opaque and passed
 * back as the `cursor` query parameter; it is omitted on the last page.
 *
 * @example
 * ```ts
 * import { listPageSchema, errorBodySchema } from '@svc/protocol';
 *
 * const page = listPageSchema(z.object({ id: z.string() })).parse(await response.json());
 * if (page.nextCursor !== undefined) fetchNext(page.nextCursor);
 * ```
 */
export function listPageSchema<Item extends z.ZodType>(itemSchema: Item) {
  return z.object({
    items: z.array(itemSchema),
    nextCursor: z.string().min(1).max(PROTOCOL_LIMITS.maxCursorLength).optional(),
  });
}

/**
 * One page of a list of `Item`.
 *
 * @example
 * ```ts
 * const page: ListPage<{ id: string }> = { items: [{ id: 'ses_01JD2S5V8Q8C4Y3K2W9T7N6M5H' }] };
 * ```
 */
export interface ListPage<Item> {
  items: Item[];
  nextCursor?: string;
}
