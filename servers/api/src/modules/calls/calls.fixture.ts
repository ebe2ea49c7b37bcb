// What the calls tests (calls.*.test.ts) share. They are calls end to end: chunks through
// POST /v1/ingest, the processing job, and the calls API.

export const T0 = Date.UTC(2026, 10, 20, 10, 0, 0);

/** The value, or a thrown error naming what was missing. */
export function must<Value>(value: Value | undefined, what = 'value'): Value {
  if (value === undefined) throw new Error(`missing ${what}`);
  return value;
}
