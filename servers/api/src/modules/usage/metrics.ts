/**
 * What is metered, per project and UTC day (`usage_daily`'s columns): sessions started, chunks
 * and their bytes as sent, bytes stored (added, and removed as a negative amount), calls and
 * their seconds, OTLP spans and log records, and AI tokens (input and output).
 */
export const USAGE_METRICS = [
  'sessions',
  'chunks',
  'ingested_bytes',
  'stored_bytes',
  'calls',
  'call_seconds',
  'spans',
  'log_records',
  'ai_tokens',
] as const;
export type UsageMetric = (typeof USAGE_METRICS)[number];

/** Amounts to add, by metric (a metric left out adds nothing). */
export type UsageDeltas = Partial<Record<UsageMetric, number>>;

/** The metrics an organization can cap per month, as the API names them, and their column. */
export const CAPPED_METRICS = {
  sessions: 'sessions',
  storedBytes: 'stored_bytes',
  aiTokens: 'ai_tokens',
} as const satisfies Record<string, UsageMetric>;
export type CappedMetric = keyof typeof CAPPED_METRICS;

/** The UTC day of an instant, `YYYY-MM-DD`. */
export function dayOf(at: Date): string {
  return at.toISOString().slice(0, 10);
}

/** The first UTC day of the instant's month, `YYYY-MM-01`. */
export function monthOf(at: Date): string {
  return `${at.toISOString().slice(0, 7)}-01`;
}

/** The first instant of the next UTC month. */
export function nextMonth(at: Date): Date {
  return new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth() + 1, 1));
}
