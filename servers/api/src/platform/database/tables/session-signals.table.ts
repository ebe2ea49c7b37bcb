import type { ColumnType, Insertable, JSONColumnType, Selectable } from 'kysely';

/** `trace`: a request that carried a trace; its `name` is the trace id (32 hex chars). */
export type SignalKind = 'error' | 'custom' | 'gap' | 'trigger' | 'trace';
export type SignalSeverity = 'critical' | 'high' | 'medium' | 'low' | 'info';

export interface SessionSignalsTable {
  project_id: string;
  session_id: string;
  seq: number;
  event_index: number;
  t: Date;
  kind: SignalKind;
  /** Null for a `custom` event sent without a severity, and for a `trace`. */
  severity: SignalSeverity | null;
  name: string;
  message: string | null;
  details: JSONColumnType<Record<string, unknown>>;
  /** When processing matched this custom event against the rules (it notifies once). */
  handled_at: ColumnType<Date | null, Date | null | undefined, Date | null>;
}

export type SessionSignal = Selectable<SessionSignalsTable>;
export type NewSessionSignal = Insertable<SessionSignalsTable>;
