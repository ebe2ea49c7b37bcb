import type { ColumnType, JSONColumnType } from 'kysely';

/** int8 columns: both engines are set to return them as numbers (see createDatabase). */
type BigintColumn = ColumnType<number, number | undefined, number>;

/** The features that may use the model. */
export type AiFeature = 'summary' | 'explain' | 'search' | 'chat' | 'draft_pr';

/** An organization's AI settings (migration 2026-12-15-ai-settings); no row: AI off. */
export interface AiSettingsTable {
  organization_id: string;
  enabled: boolean;
  /** Tokens (input and output) per calendar month (UTC); null: no cap. */
  monthly_token_cap: ColumnType<number | null, number | null | undefined, number | null>;
  features: JSONColumnType<AiFeature[]>;
  updated_by: string | null;
  updated_at: ColumnType<Date, Date | undefined, Date>;
}

/** Tokens used, per organization, month (its first day), project and feature. */
export interface AiUsageTable {
  organization_id: string;
  month: ColumnType<Date, string, string>;
  project_id: string;
  feature: string;
  requests: ColumnType<number, number | undefined, number>;
  input_tokens: BigintColumn;
  output_tokens: BigintColumn;
  updated_at: ColumnType<Date, Date | undefined, Date>;
}

/** A rating of an AI answer. */
export interface AiFeedbackTable {
  project_id: string;
  /** `fb_<ULID>`. */
  id: string;
  feature: string;
  /** What was rated: a session, issue or job id, or a chat's id. */
  subject_id: string;
  rating: 'up' | 'down';
  comment: string | null;
  /** The model that answered, when one did. */
  model: string | null;
  /** `user:<id>` or `api_token:<id>`. */
  created_by: string;
  created_at: ColumnType<Date, Date | undefined, never>;
}
