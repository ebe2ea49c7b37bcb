import type { ColumnType, JSONColumnType, Selectable } from 'kysely';

/** An anomaly that fired (migration 2026-12-14-ai-reports): each fires once per metric and hour. */
export interface AiAnomaliesTable {
  project_id: string;
  metric: string;
  /** The start of the hour it is about. */
  hour: Date;
  value: number;
  score: number;
  /** The webhook's `data.anomaly`. */
  details: JSONColumnType<Record<string, unknown>>;
  /** The notification event written with it; null when no rule matched. */
  event_id: string | null;
  created_at: ColumnType<Date, Date | undefined, never>;
}

/** A digest of a project's day or week (migration 2026-12-14-ai-reports). */
export interface AiDigestsTable {
  project_id: string;
  /** `dig_<ULID>`. */
  id: string;
  period: 'daily' | 'weekly';
  period_start: Date;
  period_end: Date;
  /** The webhook's `data.digest`. */
  content: JSONColumnType<Record<string, unknown>>;
  /** The `ai.digest` notification event written with it; null when none was. */
  event_id: string | null;
  created_at: ColumnType<Date, Date | undefined, never>;
}

export type AiDigest = Selectable<AiDigestsTable>;
