import type { ColumnType, Selectable } from 'kysely';

export interface OrganizationsTable {
  id: string;
  name: string;
  created_at: ColumnType<Date, Date | undefined, never>;
}

export type Organization = Selectable<OrganizationsTable>;
