import { z } from 'zod';
import { sessionMetaSchema, userSchema } from './session-meta.ts';

/**
 * The optional fields of `SessionMeta` (PROTOCOL.md §1), as paths inside `meta`, in the order
 * they are read. A tolerant reader ({@link repairSessionMeta}, `parseChunk`) drops any of them
 * that is empty or malformed instead of refusing the chunk; every other field of `meta` is
 * required and checked strictly. `user` is dropped whole when it is not an object with a valid
 * `id`; otherwise its `email` and `name` are read one by one.
 *
 * @example
 * ```ts
 * import { OPTIONAL_META_FIELDS } from '@svc/protocol';
 *
 * OPTIONAL_META_FIELDS.includes('os.version'); // true
 * OPTIONAL_META_FIELDS.includes('os.name'); // false: required
 * ```
 */
export const OPTIONAL_META_FIELDS = [
  'referrer',
  'browser.version',
  'os.version',
  'release',
  'environment',
  'user',
  'user.email',
  'user.name',
] as const;

/**
 * One of {@link OPTIONAL_META_FIELDS}.
 *
 * @example
 * ```ts
 * const field: OptionalMetaField = 'browser.version';
 * ```
 */
export type OptionalMetaField = (typeof OPTIONAL_META_FIELDS)[number];

/**
 * An optional field that a tolerant reader removed: its `path` from the chunk
 * (`meta.os.version`), why (`empty`: `""` or `null`, which mean "absent"; `invalid`: any other
 * value that fails the field's schema, such as a number or a string over its length limit) and
 * the validation `message`.
 *
 * @example
 * ```ts
 * const dropped: DroppedField = { path: 'meta.os.version', reason: 'empty', message: 'Too small: expected string to have >=1 characters' };
 * ```
 */
export interface DroppedField {
  path: string;
  reason: 'empty' | 'invalid';
  message: string;
}

/**
 * The result of {@link repairSessionMeta}: `meta` without the dropped fields (the value passed in
 * when nothing was dropped) and what was `dropped`.
 *
 * @example
 * ```ts
 * const { meta, dropped }: RepairedSessionMeta = repairSessionMeta(input.meta);
 * ```
 */
export interface RepairedSessionMeta {
  meta: unknown;
  dropped: DroppedField[];
}

const shape = sessionMetaSchema.shape;

/** Each optional field: where it is (`[key]` or `[parent, key]`) and the schema its value must pass. */
const optionalFields: ReadonlyArray<{
  field: OptionalMetaField;
  parent: string | undefined;
  key: string;
  schema: z.ZodType;
}> = (
  [
    ['referrer', shape.referrer.unwrap()],
    ['browser.version', shape.browser.shape.version.unwrap()],
    ['os.version', shape.os.shape.version.unwrap()],
    ['release', shape.release.unwrap()],
    ['environment', shape.environment.unwrap()],
    // A user is kept when it is an object with a valid id; its optional fields are read next.
    ['user', z.looseObject({ id: userSchema.shape.id })],
    ['user.email', userSchema.shape.email.unwrap()],
    ['user.name', userSchema.shape.name.unwrap()],
  ] as const
).map(([field, schema]) => {
  const [first, second] = field.split('.') as [string, string | undefined];
  return second === undefined
    ? { field, parent: undefined, key: first, schema }
    : { field, parent: first, key: second, schema };
});

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function describeFailure(error: z.ZodError): string {
  const [issue] = error.issues;
  if (issue === undefined) return 'Invalid value';
  return issue.path.length === 0 ? issue.message : `${issue.path.map(String).join('.')}: ${issue.message}`;
}

/**
 * Reads a chunk's `meta` tolerantly: every field of {@link OPTIONAL_META_FIELDS} that is present
 * and fails its schema is removed and reported. Nothing else is checked or changed (required
 * fields, unknown extra fields), so the result still goes through `sessionMetaSchema`, which
 * then only fails for required fields. Never throws; never modifies its argument (a changed
 * `meta` is a copy). `parseChunk` calls it.
 *
 * @example
 * ```ts
 * import { repairSessionMeta } from '@svc/protocol';
 *
 * const { meta, dropped } = repairSessionMeta({ ...validMeta, os: { name: 'Linux', version: '' } });
 * // meta.os is { name: 'Linux' }
 * // dropped: [{ path: 'meta.os.version', reason: 'empty', message: 'Too small: expected string to have >=1 characters' }]
 * ```
 */
export function repairSessionMeta(meta: unknown): RepairedSessionMeta {
  if (!isRecord(meta)) return { meta, dropped: [] };
  let repaired = meta;
  const dropped: DroppedField[] = [];
  for (const { field, parent, key, schema } of optionalFields) {
    const container = parent === undefined ? repaired : repaired[parent];
    if (!isRecord(container) || !Object.hasOwn(container, key)) continue;
    const value = container[key];
    if (value === undefined) continue;
    const result = schema.safeParse(value);
    if (result.success) continue;
    const copy = { ...container };
    delete copy[key];
    repaired = parent === undefined ? copy : { ...repaired, [parent]: copy };
    dropped.push({
      path: `meta.${field}`,
      reason: value === '' || value === null ? 'empty' : 'invalid',
      message: describeFailure(result.error),
    });
  }
  return { meta: repaired, dropped };
}
