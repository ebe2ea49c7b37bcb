import type { Kysely } from 'kysely';
import { createSessionId } from '../../../test/seed.ts';
import type { Database } from '../../platform/database/schema.ts';
import type { NewPageView } from '../../platform/database/tables/insights.table.ts';
import { createId } from '../../platform/ids.ts';

// What the releases, overview and regressions tests share: rows as ingest, the processing job
// and the facts job write them, inserted directly so each test knows its exact numbers.

export const DAY_MS = 24 * 3600 * 1000;

/** Facts of the rows one seeding call writes. */
interface SeedOptions {
  release?: string | null;
  environment?: string | null;
  /** When the first row starts (epoch ms); each next one `stepMs` later (default 1 s). */
  start: number;
  stepMs?: number;
}

/**
 * `count` sessions: the first `withErrors` of them with an error, the user of the i-th from
 * `user(i)` (none by default). Returns their ids.
 */
export async function seedSessions(
  database: Kysely<Database>,
  projectId: string,
  count: number,
  options: SeedOptions & { withErrors?: number; user?: (index: number) => string | null },
): Promise<string[]> {
  const stepMs = options.stepMs ?? 1000;
  const rows = Array.from({ length: count }, (_, index) => {
    const startedAt = options.start + index * stepMs;
    return {
      project_id: projectId,
      id: createSessionId(startedAt),
      started_at: new Date(startedAt),
      last_event_at: new Date(startedAt + 500),
      duration_ms: 500,
      release: options.release ?? null,
      environment: options.environment ?? null,
      user_id: options.user?.(index) ?? null,
      error_count: index < (options.withErrors ?? 0) ? 1 : 0,
    };
  });
  for (let index = 0; index < rows.length; index += 500)
    await database
      .insertInto('sessions')
      .values(rows.slice(index, index + 500))
      .execute();
  return rows.map((row) => row.id);
}

/** One call per score (null: unscored), the first `failed` of them never connected. */
export async function seedCalls(
  database: Kysely<Database>,
  projectId: string,
  scores: readonly (number | null)[],
  options: SeedOptions & { failed?: number },
): Promise<void> {
  const stepMs = options.stepMs ?? 1000;
  const sessionId = createSessionId(options.start);
  const rows = scores.map((score, index) => {
    const startedAt = new Date(options.start + index * stepMs);
    const failed = index < (options.failed ?? 0);
    return {
      project_id: projectId,
      id: createId('call'),
      session_id: sessionId,
      pc: `pc${index}`,
      started_at: startedAt,
      last_item_at: startedAt,
      state: 'closed' as const,
      connected: !failed,
      failed_to_connect: failed,
      failure_reason: failed ? 'connect_timeout' : null,
      relayed: false,
      local_types: JSON.stringify([]),
      remote_types: JSON.stringify([]),
      codecs: JSON.stringify([]),
      sample_count: score === null ? 0 : 1,
      track_count: 1,
      issue_kinds: JSON.stringify([]),
      issue_count: 0,
      has_issue: false,
      series: JSON.stringify({}),
      release: options.release ?? null,
      environment: options.environment ?? null,
      quality_score: score,
    };
  });
  for (let index = 0; index < rows.length; index += 500)
    await database
      .insertInto('calls')
      .values(rows.slice(index, index + 500))
      .execute();
}

/** Page views, each from `view(index)` over defaults (route `/`, no vitals). */
export async function seedPageViews(
  database: Kysely<Database>,
  projectId: string,
  count: number,
  options: SeedOptions & { view?: (index: number) => Partial<NewPageView> },
): Promise<void> {
  const stepMs = options.stepMs ?? 1000;
  const sessionId = createSessionId(options.start);
  const rows: NewPageView[] = Array.from({ length: count }, (_, index) => {
    const startedAt = new Date(options.start + index * stepMs);
    return {
      project_id: projectId,
      session_id: sessionId,
      view_index: index,
      started_at: startedAt,
      day: startedAt.toISOString().slice(0, 10),
      ended_at: new Date(startedAt.getTime() + 100),
      duration_ms: 100,
      route: '/',
      viewport_width: 1280,
      breakpoint: 'desktop',
      page_height: null,
      scroll_depth: null,
      lcp: null,
      inp: null,
      cls: null,
      fcp: null,
      ttfb: null,
      device: 'desktop',
      browser_name: 'Chrome',
      release: options.release ?? null,
      environment: options.environment ?? null,
      ...options.view?.(index),
    };
  });
  for (let index = 0; index < rows.length; index += 500)
    await database
      .insertInto('page_views')
      .values(rows.slice(index, index + 500))
      .execute();
}

/** An issue cluster with its occurrences (each at its time, in its release). Returns its id. */
export async function seedCluster(
  database: Kysely<Database>,
  projectId: string,
  title: string,
  occurrences: ReadonlyArray<{ t: number; release?: string | null; environment?: string | null }>,
): Promise<string> {
  const id = createId('cl');
  const times = occurrences.map((occurrence) => occurrence.t);
  await database
    .insertInto('issue_clusters')
    .values({
      project_id: projectId,
      id,
      fingerprint: `error:${id}`,
      kind: 'error',
      title,
      severity: 'high',
      first_seen_at: new Date(Math.min(...times)),
      last_seen_at: new Date(Math.max(...times)),
      last_release: null,
      resolved_at: null,
      resolved_release: null,
    })
    .execute();
  await database
    .insertInto('cluster_occurrences')
    .values(
      occurrences.map((occurrence, index) => ({
        project_id: projectId,
        session_id: createSessionId(occurrence.t),
        occurrence_key: `error:0:${index}`,
        cluster_id: id,
        t: new Date(occurrence.t),
        seen_at: new Date(occurrence.t),
        release: occurrence.release ?? null,
        environment: occurrence.environment ?? null,
      })),
    )
    .execute();
  return id;
}
