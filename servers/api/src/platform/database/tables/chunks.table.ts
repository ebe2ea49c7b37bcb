import type { ColumnType, Selectable } from 'kysely';

export interface ChunksTable {
  project_id: string;
  session_id: string;
  seq: number;
  blob_key: string;
  content_sha256: Uint8Array;
  encoding: string;
  received_bytes: number;
  inflated_bytes: number;
  stored_bytes: number;
  event_count: number;
  /** `call.sample` and `call.event` items in the chunk (processing reads those chunks). */
  call_item_count: ColumnType<number, number | undefined, never>;
  first_event_at: Date | null;
  last_event_at: Date | null;
  sent_at: Date;
  received_at: ColumnType<Date, Date | undefined, never>;
}

export type Chunk = Selectable<ChunksTable>;
