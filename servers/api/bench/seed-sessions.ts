import pg from 'pg';
import { monotonicFactory } from 'ulid';
import { createRandom, pick, type Weighted } from './random.ts';

// Bulk-seeds sessions for the list benchmark straight into PostgreSQL, shaped like what ingest
// indexes (src/modules/sessions/ingest-repository.ts): session rows with their aggregates (error_count, level,
// chunk_count, max_seq; one seq missing in some sessions: a gap), chunk rows and signal rows
// (errors `high`, custom events with a severity, SDK gaps and triggers `info`). A few
// multi-row statements (unnest of arrays, generate_series), not 100k HTTP requests.

const BROWSERS: Weighted<[string, string]> = [
  [['Chrome', '131.0'], 55],
  [['Safari', '18.1'], 20],
  [['Firefox', '133.0'], 10],
  [['Edge', '131.0'], 10],
  [['Samsung Internet', '26.0'], 5],
];
const DESKTOP_OS: Weighted<[string, string]> = [
  [['Windows', '11'], 55],
  [['macOS', '15.1'], 35],
  [['Linux', '6.8'], 10],
];
const MOBILE_OS: Weighted<[string, string]> = [
  [['iOS', '18.1'], 50],
  [['Android', '15'], 50],
];
const DEVICES: Weighted<string> = [
  ['desktop', 65],
  ['mobile', 30],
  ['tablet', 5],
];
const PAGES = [
  '/dashboard',
  '/calls',
  '/calls/:id',
  '/calls/:id/summary',
  '/settings/profile',
  '/settings/billing',
  '/settings/team',
  '/reports/weekly',
  '/onboarding',
  '/checkout',
];
/** What a session signalled: its signals' kinds and severities (the highest is its level). */
const PROBLEMS: Weighted<'none' | 'errors' | 'critical' | 'medium' | 'low' | 'gap' | 'trigger'> = [
  ['none', 60],
  ['errors', 15],
  ['critical', 2],
  ['medium', 8],
  ['low', 5],
  ['gap', 5],
  ['trigger', 5],
];

export interface SeededSessions {
  count: number;
  /** Start times span [oldest, newest). */
  oldest: number;
  newest: number;
  seconds: number;
}

/**
 * Inserts `count` sessions of `projectId` (with their chunk and signal rows) over the 30 days
 * before `now`, then ANALYZEs the tables.
 *
 * @example
 * ```ts
 * await seedSessions(databaseUrl, project.projectId, 100_000);
 * ```
 */
export async function seedSessions(
  databaseUrl: string,
  projectId: string,
  count: number,
  now = Date.now(),
): Promise<SeededSessions> {
  const started = performance.now();
  const random = createRandom(5_2026);
  const nextUlid = monotonicFactory(() => random());
  const span = 30 * 24 * 3600 * 1000;
  const oldest = now - span;
  // Sessions in start order, so ids (ULIDs of the start time) sort like started_at.
  const starts = Array.from({ length: count }, () => oldest + Math.floor(random() * span)).sort(
    (left, right) => left - right,
  );

  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const batch = 10_000;
    for (let offset = 0; offset < count; offset += batch) {
      const columns = {
        id: [] as string[],
        started: [] as number[],
        duration: [] as number[],
        url: [] as string[],
        browser: [] as string[],
        browserVersion: [] as string[],
        os: [] as string[],
        osVersion: [] as string[],
        device: [] as string[],
        release: [] as string[],
        environment: [] as string[],
        userId: [] as (string | null)[],
        userEmail: [] as (string | null)[],
        userName: [] as (string | null)[],
        errors: [] as number[],
        level: [] as (string | null)[],
        chunks: [] as number[],
        maxSeq: [] as number[],
        problem: [] as string[],
      };
      for (const start of starts.slice(offset, offset + batch)) {
        const device = pick(random, DEVICES);
        const [browser, browserVersion] = pick(random, BROWSERS);
        const [os, osVersion] = pick(random, device === 'desktop' ? DESKTOP_OS : MOBILE_OS);
        // Durations: log-uniform between 5 s and 2 h.
        const duration = Math.round(5000 * (7200 / 5) ** random());
        const page = (PAGES[Math.floor(random() * PAGES.length)] as string).replace(
          ':id',
          String(1 + Math.floor(random() * 5000)),
        );
        const user = random() < 0.7 ? 1 + Math.floor(random() * 5000) : undefined;
        const problem = pick(random, PROBLEMS);
        const errors = problem === 'errors' ? 1 + Math.floor(random() * 3) : problem === 'critical' ? 1 : 0;
        // A chunk every 20 s; seq 1 missing (a gap) in 3 % of sessions with more than two chunks.
        const maxSeq = Math.min(360, Math.floor(duration / 20_000));
        const missing = maxSeq >= 2 && random() < 0.03;
        columns.id.push(`ses_${nextUlid(start)}`);
        columns.started.push(start);
        columns.duration.push(duration);
        columns.url.push(`https://app.example.com${page}`);
        columns.browser.push(browser);
        columns.browserVersion.push(browserVersion);
        columns.os.push(os);
        columns.osVersion.push(osVersion);
        columns.device.push(device);
        columns.release.push(`web@1.${Math.floor((start - oldest) / (span / 20))}.0`);
        columns.environment.push(random() < 0.9 ? 'production' : 'staging');
        columns.userId.push(user === undefined ? null : `user-${user}`);
        columns.userEmail.push(user === undefined ? null : `user${user}@example.com`);
        columns.userName.push(user === undefined ? null : `User ${user}`);
        columns.errors.push(errors);
        columns.level.push(
          {
            none: null,
            errors: 'high',
            critical: 'critical',
            medium: 'medium',
            low: 'low',
            gap: 'info',
            trigger: 'info',
          }[problem],
        );
        columns.chunks.push(maxSeq + 1 - (missing ? 1 : 0));
        columns.maxSeq.push(maxSeq);
        columns.problem.push(problem);
      }
      await client.query(
        `insert into sessions (project_id, id, started_at, last_event_at, duration_ms, url, user_agent,
           browser_name, browser_version, os_name, os_version, device, viewport_width, viewport_height,
           release, environment, user_id, user_email, user_name, recording_mode, sdk_name, sdk_version,
           error_count, level, chunk_count, max_seq, stored_bytes)
         select $1, s.id, to_timestamp(s.started / 1000.0), to_timestamp((s.started + s.duration) / 1000.0),
           s.duration, s.url, 'Mozilla/5.0 (bench)', s.browser, s.browser_version, s.os, s.os_version,
           s.device, 1440, 900, s.release, s.environment, s.user_id, s.user_email, s.user_name, 'always',
           '@svc/browser-sdk', '0.1.0', s.errors, s.level, s.chunks, s.max_seq, s.chunks * 1500
         from unnest($2::text[], $3::bigint[], $4::bigint[], $5::text[], $6::text[], $7::text[], $8::text[],
           $9::text[], $10::text[], $11::text[], $12::text[], $13::text[], $14::text[], $15::text[],
           $16::int[], $17::text[], $18::int[], $19::int[])
           as s(id, started, duration, url, browser, browser_version, os, os_version, device, release,
             environment, user_id, user_email, user_name, errors, level, chunks, max_seq)`,
        [
          projectId,
          columns.id,
          columns.started,
          columns.duration,
          columns.url,
          columns.browser,
          columns.browserVersion,
          columns.os,
          columns.osVersion,
          columns.device,
          columns.release,
          columns.environment,
          columns.userId,
          columns.userEmail,
          columns.userName,
          columns.errors,
          columns.level,
          columns.chunks,
          columns.maxSeq,
        ],
      );
      // Chunk rows: seq 0 only, which the signals reference (sessions.chunk_count and max_seq say
      // how many chunks there would be: the list reads only those aggregates).
      await client.query(
        `insert into chunks (project_id, session_id, seq, blob_key, content_sha256, encoding, received_bytes,
           inflated_bytes, stored_bytes, event_count, first_event_at, last_event_at, sent_at, received_at)
         select s.project_id, s.id, 0,
           'projects/' || s.project_id || '/sessions/' || s.id || '/0000000000.0000000000000000.chunk',
           sha256(convert_to(s.id, 'UTF8')), 'json+deflate', 1200, 6000, 1500, 40, s.started_at,
           s.started_at + interval '20 seconds', s.started_at + interval '20 seconds',
           s.started_at + interval '20 seconds'
         from sessions s
         where s.project_id = $1 and s.id = any($2::text[])`,
        [projectId, columns.id],
      );
      // Signal rows in seq 0: the session's errors (and a critical custom event), or one signal.
      await client.query(
        `insert into session_signals (project_id, session_id, seq, event_index, t, kind, severity, name, message, details)
         select $1, p.id, 0, g.index, to_timestamp(p.started / 1000.0) + g.index * interval '1 second',
           case p.problem when 'errors' then 'error' when 'critical' then case g.index when 0 then 'error' else 'custom' end
             when 'gap' then 'gap' when 'trigger' then 'trigger' else 'custom' end,
           case p.problem when 'errors' then 'high' when 'critical' then case g.index when 0 then 'high' else 'critical' end
             when 'medium' then 'medium' when 'low' then 'low' else 'info' end,
           case p.problem when 'errors' then 'TypeError' when 'gap' then 'offline' when 'trigger' then 'rage_click'
             when 'critical' then case g.index when 0 then 'TypeError' else 'payment_failed' end else 'slow_page' end,
           case when p.problem in ('errors', 'critical') and g.index < p.errors then 'Cannot read properties of undefined' end,
           '{}'::jsonb
         from unnest($2::text[], $3::bigint[], $4::text[], $5::int[]) as p(id, started, problem, errors)
         cross join lateral generate_series(0, case p.problem when 'errors' then p.errors - 1 when 'critical' then 1 else 0 end) as g(index)
         where p.problem <> 'none'`,
        [projectId, columns.id, columns.started, columns.problem, columns.errors],
      );
    }
    await client.query('analyze sessions');
    await client.query('analyze chunks');
    await client.query('analyze session_signals');
  } finally {
    await client.end();
  }
  return { count, oldest, newest: now, seconds: (performance.now() - started) / 1000 };
}
