import { type Kysely, sql } from 'kysely';

// Custom events (SDK `track()`) for notification rules with a `custom` source.
//
// - `session_signals.severity` becomes optional: every `custom` event is a signal now, with the
//   severity it was sent with, or none. A session's `level` and its issues list still count only
//   custom events with a severity.
// - `session_signals.handled_at`: when processing matched a custom event against the project's
//   rules, so it notifies at most once however often its session is processed again.

// biome-ignore lint/suspicious/noExplicitAny: migrations work on any schema
export async function up(database: Kysely<any>): Promise<void> {
  await sql`alter table session_signals alter column severity drop not null`.execute(database);
  await sql`alter table session_signals add column handled_at timestamptz`.execute(database);
  await sql`
    create index session_signals_custom_unhandled on session_signals (project_id, session_id)
    where kind = 'custom' and handled_at is null`.execute(database);
}
