import type { z } from 'zod';

/**
 * JSON Schema keywords for rules that a zod refinement checks but `z.toJSONSchema` cannot see
 * (a refinement is code). The JSON Schema build merges them into the generated schema, so zod and
 * a JSON Schema validator agree on every rule. Internal: not exported from the package.
 */
const keywordsBySchema = new WeakMap<z.ZodType, Record<string, unknown>>();

/**
 * Records the JSON Schema keywords that express `schema`'s refinements and returns the schema.
 *
 * @example
 * ```ts
 * const props = withJsonSchemaKeywords(z.record(z.string(), z.string()).refine(...), { maxProperties: 64 });
 * ```
 */
export function withJsonSchemaKeywords<Schema extends z.ZodType>(
  schema: Schema,
  keywords: Record<string, unknown>,
): Schema {
  keywordsBySchema.set(schema, keywords);
  return schema;
}

/**
 * The keywords recorded for `schema` by {@link withJsonSchemaKeywords}, if any.
 *
 * @example
 * ```ts
 * Object.assign(jsonSchema, getJsonSchemaKeywords(zodSchema));
 * ```
 */
export function getJsonSchemaKeywords(schema: z.ZodType): Record<string, unknown> | undefined {
  return keywordsBySchema.get(schema);
}
