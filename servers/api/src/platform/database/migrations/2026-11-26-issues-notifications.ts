import { type Kysely, sql } from 'kysely';

// Issues and notifications (service-spec "Issues", "Notifications"; PROTOCOL.md §6).
//
// - `issue_clusters`: problems clustered across sessions per project and fingerprint (a detector
//   kind, or `error:<hash>` of a normalized error name and top frames), with their status.
// - `cluster_occurrences`: one row per occurrence (a finding of a peer connection, an error
//   event), keyed by its place in the session, so a recomputation never counts one twice. Its
//   `seen_at` (server clock) is what `count24h` counts.
// - `notification_channels`: where notifications go. A webhook channel's secret is sealed with
//   the project's data key (AES-256-GCM); after a rotation the previous one is kept for 24 h.
// - `notification_rules`: which events go to which channels, with a throttle;
//   `rule_throttles` remembers when a rule last notified about a subject.
// - `notification_events`: every notification (`evt_`), its webhook envelope as sent, and its
//   inbox state. Written in the transaction of its cause.
// - `deliveries`: the durable outbox, one row per (event, channel), written in the same
//   transaction as the event; workers claim due rows with `for update skip locked`.
// - `delivery_attempts`: every attempt of a delivery (status, duration, first 2 KB, error).

// biome-ignore lint/suspicious/noExplicitAny: migrations work on any schema
export async function up(database: Kysely<any>): Promise<void> {
  await sql`
    create table issue_clusters (
      project_id text not null references projects (id),
      id text not null,
      fingerprint text not null,
      kind text not null,
      title text not null,
      severity text not null,
      status text not null default 'open',
      first_seen_at timestamptz not null,
      last_seen_at timestamptz not null,
      last_release text,
      resolved_at timestamptz,
      resolved_release text,
      status_changed_at timestamptz not null default now(),
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now(),
      primary key (project_id, id),
      unique (project_id, fingerprint)
    )`.execute(database);
  await sql`create index issue_clusters_last_seen on issue_clusters (project_id, last_seen_at desc, id desc)`.execute(
    database,
  );

  await sql`
    create table cluster_occurrences (
      project_id text not null references projects (id),
      session_id text not null,
      occurrence_key text not null,
      cluster_id text not null,
      t timestamptz not null,
      seen_at timestamptz not null,
      release text,
      environment text,
      primary key (project_id, session_id, occurrence_key)
    )`.execute(database);
  await sql`create index cluster_occurrences_cluster on cluster_occurrences (project_id, cluster_id, seen_at desc)`.execute(
    database,
  );
  await sql`create index cluster_occurrences_sessions on cluster_occurrences (project_id, cluster_id, session_id)`.execute(
    database,
  );

  await sql`
    create table notification_channels (
      project_id text not null references projects (id),
      id text not null,
      type text not null,
      name text not null,
      url text not null,
      enabled boolean not null default true,
      sealed_secret bytea not null,
      sealed_previous_secret bytea,
      previous_secret_expires_at timestamptz,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now(),
      primary key (project_id, id)
    )`.execute(database);

  await sql`
    create table notification_rules (
      project_id text not null references projects (id),
      id text not null,
      name text not null,
      enabled boolean not null default true,
      source jsonb not null,
      channel_ids jsonb not null,
      throttle_minutes integer not null,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now(),
      primary key (project_id, id)
    )`.execute(database);

  await sql`
    create table rule_throttles (
      project_id text not null references projects (id),
      rule_id text not null,
      subject text not null,
      notified_at timestamptz not null,
      primary key (project_id, rule_id, subject)
    )`.execute(database);

  await sql`
    create table notification_events (
      project_id text not null references projects (id),
      id text not null,
      type text not null,
      severity text not null,
      title text not null,
      cluster_id text,
      rule_ids jsonb not null,
      payload text not null,
      inbox boolean not null,
      acked_at timestamptz,
      created_at timestamptz not null default now(),
      primary key (project_id, id)
    )`.execute(database);
  await sql`create index notification_events_inbox on notification_events (project_id, id desc) where inbox`.execute(
    database,
  );

  await sql`
    create table deliveries (
      project_id text not null references projects (id),
      id text not null,
      event_id text not null,
      event_type text not null,
      channel_id text not null,
      status text not null default 'pending',
      attempts integer not null default 0,
      due_at timestamptz not null,
      locked_until timestamptz,
      last_status integer,
      last_error text,
      replay_of text,
      delivered_at timestamptz,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now(),
      primary key (project_id, id)
    )`.execute(database);
  await sql`create index deliveries_due on deliveries (due_at) where status = 'pending'`.execute(database);
  await sql`create index deliveries_listing on deliveries (project_id, id desc)`.execute(database);

  await sql`
    create table delivery_attempts (
      project_id text not null references projects (id),
      delivery_id text not null,
      attempt integer not null,
      started_at timestamptz not null,
      duration_ms integer not null,
      outcome text not null,
      status_code integer,
      response_body text,
      error text,
      primary key (project_id, delivery_id, attempt)
    )`.execute(database);
}
