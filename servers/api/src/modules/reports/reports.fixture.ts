import type { Insertable, Kysely } from 'kysely';
import { createSessionId } from '../../../test/seed.ts';
import type { Database } from '../../platform/database/schema.ts';
import type { CallsTable } from '../../platform/database/tables/calls.table.ts';
import type { NewPageView } from '../../platform/database/tables/insights.table.ts';
import type { SessionsTable } from '../../platform/database/tables/sessions.table.ts';
import { createId } from '../../platform/ids.ts';

// What the anomaly and digest tests share: rows as ingest (sessions: `error_count` counts the
// session's error events), the processing job (calls: `failed_to_connect`, `relayed`,
// `quality_score`) and the facts job (page views: `rage_clicks` per view) write them, inserted
// directly so each test knows its exact numbers.

export const MINUTE_MS = 60_000;
export const HOUR_MS = 60 * MINUTE_MS;
export const DAY_MS = 24 * HOUR_MS;
export const WEEK_MS = 7 * DAY_MS;

/** What happened in one hour of a project. */
export interface HourActivity {
  sessions: number;
  /** Sessions with an error (the first ones of the hour). */
  sessionsWithErrors: number;
  /** One quality score per call (null: unscored), in order. */
  callScores: readonly (number | null)[];
  /** Calls that never connected (the first ones; unscored whatever `callScores` says). */
  failedCalls: number;
  /** Calls relayed through TURN (the last ones). */
  relayedCalls?: number;
  pageViews: number;
  /** Rage clicks of the hour, one per page view from the first. */
  rageClicks: number;
  /** Per page view, its LCP (ms), INP (ms) and CLS, when measured. */
  vitals?: (index: number) => { lcp?: number; inp?: number; cls?: number };
}

/** Rows to insert, gathered hour by hour and written in batches. */
export class ActivityRows {
  readonly sessions: Array<Insertable<SessionsTable>> = [];
  readonly calls: Array<Insertable<CallsTable>> = [];
  readonly pageViews: NewPageView[] = [];

  readonly projectId: string;

  constructor(projectId: string) {
    this.projectId = projectId;
  }

  /** The rows of an hour starting at `hour` (epoch ms): its rows spread over its minutes. */
  add(hour: number, activity: HourActivity): this {
    const spread = (index: number, count: number) => hour + Math.floor(((index + 0.5) * HOUR_MS) / count);
    const sessionIds: string[] = [];
    for (let index = 0; index < activity.sessions; index += 1) {
      const startedAt = spread(index, activity.sessions);
      const id = createSessionId(startedAt);
      sessionIds.push(id);
      this.sessions.push({
        project_id: this.projectId,
        id,
        started_at: new Date(startedAt),
        last_event_at: new Date(startedAt + 30_000),
        duration_ms: 30_000,
        error_count: index < activity.sessionsWithErrors ? 2 : 0,
      });
    }
    const calls = activity.callScores.length;
    for (let index = 0; index < calls; index += 1) {
      const startedAt = new Date(spread(index, calls));
      const failed = index < activity.failedCalls;
      this.calls.push({
        project_id: this.projectId,
        id: createId('call'),
        session_id:
          sessionIds[index % Math.max(1, sessionIds.length)] ?? createSessionId(startedAt.getTime()),
        pc: `pc${index}`,
        started_at: startedAt,
        last_item_at: startedAt,
        state: 'closed',
        connected: !failed,
        failed_to_connect: failed,
        failure_reason: failed ? 'ice_failed' : null,
        relayed: !failed && index >= calls - (activity.relayedCalls ?? 0),
        local_types: JSON.stringify([]),
        remote_types: JSON.stringify([]),
        codecs: JSON.stringify([]),
        sample_count: 1,
        track_count: 1,
        issue_kinds: JSON.stringify([]),
        issue_count: 0,
        has_issue: false,
        series: JSON.stringify({}),
        quality_score: failed ? null : (activity.callScores[index] ?? null),
      });
    }
    for (let index = 0; index < activity.pageViews; index += 1) {
      const startedAt = new Date(spread(index, activity.pageViews));
      const vitals = activity.vitals?.(index) ?? {};
      this.pageViews.push({
        project_id: this.projectId,
        session_id:
          sessionIds[index % Math.max(1, sessionIds.length)] ?? createSessionId(startedAt.getTime()),
        view_index: this.pageViews.length,
        started_at: startedAt,
        day: startedAt.toISOString().slice(0, 10),
        ended_at: new Date(startedAt.getTime() + 10_000),
        duration_ms: 10_000,
        route: '/',
        viewport_width: 1280,
        breakpoint: 'desktop',
        page_height: null,
        scroll_depth: null,
        rage_clicks: index < activity.rageClicks ? 1 : 0,
        lcp: vitals.lcp ?? null,
        inp: vitals.inp ?? null,
        cls: vitals.cls ?? null,
        fcp: null,
        ttfb: null,
        device: 'desktop',
        browser_name: 'Chrome',
        release: null,
        environment: null,
      });
    }
    return this;
  }

  /** Inserts every row gathered (batches of 1,000). */
  async insert(database: Kysely<Database>): Promise<void> {
    const batches = <Row>(rows: readonly Row[]) =>
      Array.from({ length: Math.ceil(rows.length / 1000) }, (_, index) =>
        rows.slice(index * 1000, index * 1000 + 1000),
      );
    for (const batch of batches(this.sessions)) await database.insertInto('sessions').values(batch).execute();
    for (const batch of batches(this.calls)) await database.insertInto('calls').values(batch).execute();
    for (const batch of batches(this.pageViews))
      await database.insertInto('page_views').values(batch).execute();
  }
}

/**
 * A deterministic pseudo-random number generator (mulberry32): the same seed, the same series,
 * so a test's "noise" is the same on every run.
 */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let mixed = state;
    mixed = Math.imul(mixed ^ (mixed >>> 15), mixed | 1);
    mixed ^= mixed + Math.imul(mixed ^ (mixed >>> 7), mixed | 61);
    return ((mixed ^ (mixed >>> 14)) >>> 0) / 4294967296;
  };
}
