import pg from 'pg';

// What the search bench adds to the sessions of bench/seed-sessions.ts, in a few set-based
// statements (`insert … select` over the seeded sessions, choices by a hash of the session id, so
// every run seeds the same rows): an error with a varied message in every session with errors
// (a few mention "zanzibar", the rare word), a call in one session of five (network types, relays,
// failures, findings, quality scores), and the issue clusters of those errors and findings with
// an occurrence each. All of it goes through the search indexes as ingest and processing would
// write it (the indexes exist before the rows).

const VERBS = [
  'Checkout',
  'Payment',
  'Upload',
  'Export',
  'Login',
  'Search',
  'Render',
  'Sync',
  'Invite',
  'Refund',
  'Signup',
  'Import',
  'Billing',
  'Profile',
  'Report',
  'Chart',
  'Calendar',
  'Message',
  'Notification',
  'Settings',
];
const NOUNS = [
  'request',
  'form',
  'widget',
  'session',
  'token',
  'socket',
  'worker',
  'cache',
  'stream',
  'query',
  'dialog',
  'table',
  'iframe',
  'listener',
  'promise',
];
const REASONS = [
  'payment declined by the card issuer',
  'network request timed out',
  'unexpected token in JSON',
  'quota exceeded',
  'permission denied',
  'resource not found',
  'card declined',
  'maximum call stack size exceeded',
  'script error',
  'connection reset by peer',
];
const CALL_FINDINGS = [
  '["webrtc_packet_loss"]',
  '["webrtc_high_latency"]',
  '["webrtc_freeze", "webrtc_low_resolution"]',
  '["webrtc_audio_dropout"]',
  '["webrtc_relay_fallback"]',
  '[]',
  '[]',
  '[]',
];
const FAILURES = ['ice_failed', 'connect_timeout', 'ice_candidate_error_701'];

export interface SeededSearch {
  errors: number;
  rareErrors: number;
  calls: number;
  clusters: number;
  occurrences: number;
  seconds: number;
}

const literal = (values: readonly string[]) => `array[${values.map((value) => `'${value}'`).join(', ')}]`;

/**
 * Adds errors, calls and issue clusters to the sessions `seedSessions` inserted for `projectId`.
 *
 * @example
 * ```ts
 * await seedSessions(url, projectId, 100_000);
 * await seedSearch(url, projectId);
 * ```
 */
export async function seedSearch(databaseUrl: string, projectId: string): Promise<SeededSearch> {
  const started = performance.now();
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  const h = '(abs(hashtext(s.id)))';
  // Calls are in sessions with h % 5 = 0; one call in 20 failed to connect.
  const failed = `((${h} / 5) % 20 = 0)`;
  try {
    // One more error in each session with errors: "<Verb> failed: <noun> <reason> (order <n>)".
    const errors = await client.query(
      `insert into session_signals (project_id, session_id, seq, event_index, t, kind, severity, name, message, details)
       select s.project_id, s.id, 0, 10, s.started_at + interval '5 seconds', 'error', 'high', 'Error',
         (${literal(VERBS)})[1 + ${h} % ${VERBS.length}] || ' failed: ' ||
           (${literal(NOUNS)})[1 + (${h} / 20) % ${NOUNS.length}] || ' ' ||
           (${literal(REASONS)})[1 + (${h} / 300) % ${REASONS.length}] || ' (order ' || (${h} % 100000) || ')' ||
           case when ${h} % 2000 = 0 then ' near zanzibar' else '' end,
         '{}'::jsonb
       from sessions s where s.project_id = $1 and s.error_count > 0`,
      [projectId],
    );
    const rare = await client.query<{ count: string }>(
      `select count(*) from session_signals where project_id = $1 and message like '%zanzibar%'`,
      [projectId],
    );
    // A call in one session of five.
    const calls = await client.query(
      `insert into calls (project_id, id, session_id, pc, started_at, last_item_at, ended_at, duration_ms, state,
         end_reason, setup_ms, connected, failed_to_connect, failure_reason, relayed, local_types, remote_types,
         protocol, network_type, browser_name, browser_version, os_name, device, release, environment, end_user_id,
         quality_score, codec, codecs, sample_count, track_count, issue_kinds, issue_count, has_issue, max_severity,
         series)
       select s.project_id, 'call_' || substr(s.id, 5), s.id, 'pc_' || substr(s.id, 5), s.started_at + interval '3 seconds',
         s.last_event_at, s.last_event_at, greatest(0, s.duration_ms - 3000), 'closed', 'closed',
         case when ${failed} then null else 100 + ${h} % 900 end, not ${failed}, ${failed},
         case when ${failed} then (${literal(FAILURES)})[1 + (${h} / 100) % ${FAILURES.length}] end,
         (${h} / 5) % 10 = 1, '["host"]', '["srflx"]', 'udp',
         (array['wifi', 'cellular', 'ethernet', 'vpn'])[1 + (${h} / 7) % 4], s.browser_name, s.browser_version,
         s.os_name, s.device, s.release, s.environment, s.user_id,
         case when ${failed} then null else 40 + ${h} % 61 end, 'video/VP8', '["audio/opus", "video/VP8"]',
         s.duration_ms / 5000, 4,
         case when ${failed} then '["webrtc_connect_failure"]'
           else (${literal(CALL_FINDINGS)})[1 + (${h} / 11) % ${CALL_FINDINGS.length}] end::jsonb, 0, false, null,
         '{}'::jsonb
       from sessions s where s.project_id = $1 and ${h} % 5 = 0`,
      [projectId],
    );
    await client.query(
      `update calls set issue_count = jsonb_array_length(issue_kinds), has_issue = issue_kinds <> '["webrtc_relay_fallback"]' and issue_kinds <> '[]',
         max_severity = case when issue_kinds = '[]' then null when issue_kinds = '["webrtc_relay_fallback"]' then 'info'
           when issue_kinds = '["webrtc_connect_failure"]' then 'high' else 'medium' end
       where project_id = $1`,
      [projectId],
    );
    // An error cluster per verb and noun, a detector cluster per finding kind.
    const clusters = await client.query(
      `insert into issue_clusters (project_id, id, fingerprint, kind, title, severity, first_seen_at, last_seen_at)
       select $1, 'cl_bench' || lpad(v.n::text, 3, '0') || lpad(o.n::text, 3, '0'), 'error:bench-' || v.n || '-' || o.n,
         'error', 'Error: ' || v.verb || ' failed: ' || o.noun || ' <text> (order <n>)', 'high', now(), now()
       from unnest(${literal(VERBS)}::text[]) with ordinality as v(verb, n),
         unnest(${literal(NOUNS)}::text[]) with ordinality as o(noun, n)
       union all
       select $1, 'cl_bench_' || k.kind, k.kind, k.kind, initcap(replace(substr(k.kind, 8), '_', ' ')) || ' in a call',
         case when k.kind = 'webrtc_connect_failure' then 'high' when k.kind = 'webrtc_relay_fallback' then 'info' else 'medium' end,
         now(), now()
       from (select distinct jsonb_array_elements_text(issue_kinds) as kind from calls where project_id = $1) k`,
      [projectId],
    );
    const errorOccurrences = await client.query(
      `insert into cluster_occurrences (project_id, session_id, occurrence_key, cluster_id, t, seen_at, release, environment)
       select s.project_id, s.id, 'error:0:10',
         'cl_bench' || lpad((1 + ${h} % ${VERBS.length})::text, 3, '0') || lpad((1 + (${h} / 20) % ${NOUNS.length})::text, 3, '0'),
         s.started_at + interval '5 seconds', s.started_at + interval '5 seconds', s.release, s.environment
       from sessions s where s.project_id = $1 and s.error_count > 0`,
      [projectId],
    );
    const findingOccurrences = await client.query(
      `insert into cluster_occurrences (project_id, session_id, occurrence_key, cluster_id, t, seen_at, release, environment)
       select c.project_id, c.session_id, 'finding:' || c.pc || ':' || k.kind, 'cl_bench_' || k.kind, c.started_at,
         c.started_at, c.release, c.environment
       from calls c cross join lateral jsonb_array_elements_text(c.issue_kinds) as k(kind)
       where c.project_id = $1`,
      [projectId],
    );
    await client.query(
      `update issue_clusters i set first_seen_at = o.first, last_seen_at = o.last
       from (select cluster_id, min(t) as first, max(t) as last from cluster_occurrences where project_id = $1 group by cluster_id) o
       where i.project_id = $1 and i.id = o.cluster_id`,
      [projectId],
    );
    for (const table of ['sessions', 'session_signals', 'calls', 'issue_clusters', 'cluster_occurrences'])
      await client.query(`analyze ${table}`);
    return {
      errors: errors.rowCount ?? 0,
      rareErrors: Number(rare.rows[0]?.count ?? 0),
      calls: calls.rowCount ?? 0,
      clusters: clusters.rowCount ?? 0,
      occurrences: (errorOccurrences.rowCount ?? 0) + (findingOccurrences.rowCount ?? 0),
      seconds: (performance.now() - started) / 1000,
    };
  } finally {
    await client.end();
  }
}
