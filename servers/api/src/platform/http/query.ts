import { z } from 'zod';

// Query-string parameters arrive as strings: each helper accepts exactly one written form and
// converts it, so `limit=abc`, `limit=1e3` or `hasErrors=yes` are a 400 with a clear message.

/** A decimal integer in `minimum..maximum`. */
export function integerParameter(minimum: number, maximum: number) {
  return z
    .string()
    .regex(/^-?\d{1,12}$/, { message: 'Expected a decimal integer' })
    .transform(Number)
    .pipe(z.int().min(minimum).max(maximum));
}

/** A non-negative decimal number (e.g. seconds), at most `maximum`. */
export function numberParameter(maximum: number) {
  return z
    .string()
    .regex(/^-?\d{1,12}(\.\d{1,6})?$/, { message: 'Expected a decimal number' })
    .transform(Number)
    .pipe(z.number().min(0).max(maximum));
}

/** `true` or `false`. */
export const booleanParameter = z
  .enum(['true', 'false'], { message: 'Expected true or false' })
  .transform((value) => value === 'true');

const ISO_DATE_TIME = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})?)?$/i;

/** A time: ISO 8601 (`2026-11-22`, `2026-11-22T10:00:00Z`, with an offset) or epoch milliseconds. */
export const timeParameter = z
  .string()
  .max(40)
  .transform((value, context) => {
    const time = /^\d{1,15}$/.test(value)
      ? Number(value)
      : ISO_DATE_TIME.test(value)
        ? Date.parse(value)
        : Number.NaN;
    if (Number.isNaN(time) || time < 0 || time > 8_640_000_000_000_000) {
      context.addIssue({
        code: 'custom',
        message: 'Expected an ISO 8601 date or date-time (e.g. 2026-11-22T10:00:00Z) or epoch milliseconds',
      });
      return z.NEVER;
    }
    return new Date(time);
  });

/** A short exact-match text. */
export const textParameter = (maximum = 256) => z.string().min(1).max(maximum);

/** Refuses a query whose `to` is not after its `from` (both optional), as a 400 on `to`. */
export function checkTimeRange(
  context: z.core.ParsePayload<{ from?: Date | undefined; to?: Date | undefined }>,
): void {
  const { from, to } = context.value;
  if (from !== undefined && to !== undefined && from.getTime() >= to.getTime()) {
    context.issues.push({
      code: 'custom',
      message: '`to` must be after `from`',
      path: ['to'],
      input: context.value,
    });
  }
}
