import type { ColumnType, JSONColumnType, Selectable } from 'kysely';

export type DeliveryStatus = 'pending' | 'delivered' | 'failed';
export type AttemptOutcome = 'delivered' | 'failed' | 'refused';

/** Where notifications go (only `webhook` today). */
export interface NotificationChannelsTable {
  project_id: string;
  id: string;
  type: 'webhook';
  name: string;
  url: string;
  enabled: ColumnType<boolean, boolean | undefined, boolean>;
  /** The `whsec_` secret sealed with the project's data key. */
  sealed_secret: Uint8Array;
  /** The secret before the last rotation, still signing until `previous_secret_expires_at`. */
  sealed_previous_secret: Uint8Array | null;
  previous_secret_expires_at: Date | null;
  created_at: ColumnType<Date, Date | undefined, never>;
  updated_at: ColumnType<Date, Date | undefined, Date>;
}

/** Which events go to which channels. */
export interface NotificationRulesTable {
  project_id: string;
  id: string;
  name: string;
  enabled: ColumnType<boolean, boolean | undefined, boolean>;
  source: JSONColumnType<Record<string, unknown>>;
  channel_ids: JSONColumnType<string[]>;
  throttle_minutes: number;
  created_at: ColumnType<Date, Date | undefined, never>;
  updated_at: ColumnType<Date, Date | undefined, Date>;
}

/** When a rule last notified about a subject (a cluster, a custom event name). */
export interface RuleThrottlesTable {
  project_id: string;
  rule_id: string;
  subject: string;
  notified_at: Date;
}

/** A notification: its webhook envelope as sent to every channel, and its inbox state. */
export interface NotificationEventsTable {
  project_id: string;
  id: string;
  type: string;
  severity: string;
  title: string;
  cluster_id: string | null;
  rule_ids: JSONColumnType<string[]>;
  /** The webhook envelope exactly as every delivery sends it. */
  payload: string;
  inbox: boolean;
  acked_at: Date | null;
  created_at: ColumnType<Date, Date | undefined, never>;
}

/** The outbox: one row per (event, channel). */
export interface DeliveriesTable {
  project_id: string;
  id: string;
  event_id: string;
  event_type: string;
  channel_id: string;
  status: ColumnType<DeliveryStatus, DeliveryStatus | undefined, DeliveryStatus>;
  attempts: ColumnType<number, number | undefined, number>;
  due_at: Date;
  locked_until: Date | null;
  last_status: number | null;
  last_error: string | null;
  /** The delivery this one replays. */
  replay_of: string | null;
  delivered_at: Date | null;
  created_at: ColumnType<Date, Date | undefined, never>;
  updated_at: ColumnType<Date, Date | undefined, Date>;
}

export interface DeliveryAttemptsTable {
  project_id: string;
  delivery_id: string;
  attempt: number;
  started_at: Date;
  duration_ms: number;
  outcome: AttemptOutcome;
  status_code: number | null;
  /** The first 2 KB of the response. */
  response_body: string | null;
  error: string | null;
}

export type NotificationChannel = Selectable<NotificationChannelsTable>;
export type NotificationRule = Selectable<NotificationRulesTable>;
export type NotificationEvent = Selectable<NotificationEventsTable>;
export type Delivery = Selectable<DeliveriesTable>;
export type DeliveryAttempt = Selectable<DeliveryAttemptsTable>;
