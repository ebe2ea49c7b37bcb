import { z } from 'zod';
import { withJsonSchemaKeywords } from './json-schema-keywords.ts';
import { PROTOCOL_LIMITS } from './limits.ts';

/**
 * A client timestamp: integer milliseconds since the Unix epoch, between 2000-01-01 and
 * 2100-01-01 (`PROTOCOL_LIMITS.minTimestamp`..`maxTimestamp`).
 *
 * @example
 * ```ts
 * timestampSchema.parse(1763700000000); // ok
 * timestampSchema.safeParse(1763700000000.5).success; // false
 * ```
 */
export const timestampSchema = z.int().min(PROTOCOL_LIMITS.minTimestamp).max(PROTOCOL_LIMITS.maxTimestamp);

/**
 * A duration: integer milliseconds, 0..`PROTOCOL_LIMITS.maxDurationMs`.
 *
 * @example
 * ```ts
 * durationSchema.parse(5000); // ok
 * durationSchema.safeParse(-1).success; // false
 * ```
 */
export const durationSchema = z.int().min(0).max(PROTOCOL_LIMITS.maxDurationMs);

/**
 * A percentage (`...Pct`): a finite number 0..100.
 *
 * @example
 * ```ts
 * percentageSchema.parse(0.4); // ok
 * percentageSchema.safeParse(101).success; // false
 * ```
 */
export const percentageSchema = z.number().min(0).max(100);

/**
 * A non-negative integer counter, 0..`PROTOCOL_LIMITS.maxCount`.
 *
 * @example
 * ```ts
 * countSchema.parse(3); // ok
 * countSchema.safeParse(1.5).success; // false
 * ```
 */
export const countSchema = z.int().min(0).max(PROTOCOL_LIMITS.maxCount);

/**
 * Severity of a custom event or a webhook notification.
 *
 * @example
 * ```ts
 * severitySchema.parse('high'); // 'high'
 * ```
 */
export const severitySchema = z.enum(['critical', 'high', 'medium', 'low', 'info']);

/**
 * A severity: `critical` | `high` | `medium` | `low` | `info`.
 *
 * @example
 * ```ts
 * const severity: Severity = 'critical';
 * ```
 */
export type Severity = z.infer<typeof severitySchema>;

/**
 * Severities, lowest first: a session's `level` is the highest of its signals', and a
 * `minSeverity` filter keeps what ranks at or above it.
 *
 * @example
 * ```ts
 * SEVERITY_ORDER.indexOf('high') > SEVERITY_ORDER.indexOf('low'); // true
 * ```
 */
export const SEVERITY_ORDER: readonly Severity[] = ['info', 'low', 'medium', 'high', 'critical'];

/**
 * The higher of two severities (`undefined` ranks below any).
 *
 * @example
 * ```ts
 * higherSeverity('low', 'critical'); // 'critical'
 * higherSeverity(undefined, 'info'); // 'info'
 * ```
 */
export function higherSeverity(a: Severity | undefined, b: Severity | undefined): Severity | undefined {
  if (a === undefined) return b;
  if (b === undefined) return a;
  return SEVERITY_ORDER.indexOf(a) >= SEVERITY_ORDER.indexOf(b) ? a : b;
}

/** A string of 1..`maximum` characters (internal helper). */
export function boundedText(maximum: number = PROTOCOL_LIMITS.maxNameLength): z.ZodString {
  return z.string().min(1).max(maximum);
}

/**
 * An object of at most `PROTOCOL_LIMITS.maxProperties` properties with keys of
 * 1..`maxNameLength` characters (internal helper; the JSON Schema gets `maxProperties`).
 */
export function boundedRecord<Value extends z.ZodType>(value: Value) {
  return withJsonSchemaKeywords(
    z
      .record(boundedText(), value)
      .refine((record) => Object.keys(record).length <= PROTOCOL_LIMITS.maxProperties, {
        message: `Too many properties: at most ${PROTOCOL_LIMITS.maxProperties}`,
      }),
    { maxProperties: PROTOCOL_LIMITS.maxProperties },
  );
}
