import { z } from 'zod';

// What every resource's views share. What is unknown is omitted, never null.

/** `{ name, version }`: a browser, an OS, an SDK. */
export const nameAndVersionSchema = z.object({ name: z.string(), version: z.string() });

/** A nullable column as an optional field: the API omits what is unknown, never `null`. */
export function optional<Value>(value: Value | null): Value | undefined {
  return value ?? undefined;
}

/** `{ name, version }` from a name and a version column (omitted without a name). */
export function nameAndVersion(name: string | null, version: string | null) {
  return name === null ? undefined : { name, version: version ?? '' };
}
