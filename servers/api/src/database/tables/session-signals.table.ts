import type { Insertable, JSONColumnType, Selectable } from 'kysely';

export type SignalKind = 'error' | 'custom' | 'gap' | 'trigger';
export type SignalSeverity = 'critical' | 'high' | 'medium' | 'low' | 'info';

export interface SessionSignalsTable {
  project_id: string;
  session_id: string;
  seq: number;
  event_index: number;
  t: Date;
  kind: SignalKind;
  severity: SignalSeverity;
  name: string;
  message: string | null;
  details: JSONColumnType<Record<string, unknown>>;
}

export type SessionSignal = Selectable<SessionSignalsTable>;
export type NewSessionSignal = Insertable<SessionSignalsTable>;
