import type { ColumnType, Insertable, JSONColumnType, Selectable } from 'kysely';
import type { SessionJobsTable } from './session-jobs.table.ts';

/** The facts job's queue (migration 2026-12-06-insights): one row per session with chunks to read. */
export type InsightJobsTable = SessionJobsTable;

/** Per session, where the facts job stands: its state (JSON text) and the chunks it consumed. */
export interface InsightProgressTable {
  project_id: string;
  session_id: string;
  /** Bumped by every write; a job writes only over the version it read. */
  version: number;
  /** The highest chunk seq consumed; every consumed chunk is at or below it. */
  consumed_seq: number;
  /** A `FactsState` of src/modules/insights/page-facts.ts, as JSON text. */
  state: string;
  updated_at: ColumnType<Date, Date | undefined, Date>;
}

/** The web page sizes by viewport width: below 768 px, below 1024 px, and wider. */
export type Breakpoint = 'mobile' | 'tablet' | 'desktop';

/** One page view of a session, keyed by its index in the session. */
export interface PageViewsTable {
  project_id: string;
  session_id: string;
  view_index: number;
  started_at: Date;
  /** The UTC day of `started_at` (read as a Date at UTC midnight). */
  day: ColumnType<Date, string, string>;
  /** The next page view's start, or the last event seen on this one. */
  ended_at: Date;
  duration_ms: number;
  route: string;
  viewport_width: number | null;
  breakpoint: Breakpoint | null;
  /** The document's height (px) as last reported by the SDK; null when it did not say. */
  page_height: number | null;
  /** How far down the page was seen (px): the viewport's bottom at its deepest scroll. */
  scroll_depth: number | null;
  clicks: ColumnType<number, number | undefined, number>;
  rage_clicks: ColumnType<number, number | undefined, number>;
  dead_clicks: ColumnType<number, number | undefined, number>;
  lcp: number | null;
  inp: number | null;
  cls: number | null;
  fcp: number | null;
  ttfb: number | null;
  device: string | null;
  browser_name: string | null;
  release: string | null;
  environment: string | null;
}

export type ClickKind = 'click' | 'rage' | 'dead';

/** One click, rage click (a burst, at its first click) or dead click of a session. */
export interface ClickFactsTable {
  project_id: string;
  session_id: string;
  kind: ClickKind;
  /** The (first) click's index among the session's clicks. */
  ordinal: number;
  view_index: number;
  t: Date;
  day: ColumnType<Date, string, string>;
  route: string;
  breakpoint: Breakpoint | null;
  /** The target element's CSS selector; null when the snapshot did not have it. */
  selector: string | null;
  /** The click's position on the page (px, scroll included). */
  page_x: number;
  page_y: number;
  /** The click's position within the target element, as fractions of its width and height. */
  element_x: number | null;
  element_y: number | null;
  /** Clicks in the burst (rage), else 1. */
  count: ColumnType<number, number | undefined, number>;
}

/** One step of a funnel. */
export type FunnelStep =
  | { type: 'pageview'; route: string }
  | { type: 'event'; name: string; properties?: Record<string, string | number | boolean> }
  | { type: 'click'; selector: string };

/** A saved funnel of a project. */
export interface FunnelsTable {
  id: string;
  project_id: string;
  name: string;
  steps: JSONColumnType<FunnelStep[]>;
  /** The conversion window: every step within this long after the first. */
  window_ms: ColumnType<number, number, number>;
  count_by: 'session' | 'user';
  created_by: string | null;
  created_at: ColumnType<Date, Date | undefined, never>;
  updated_at: ColumnType<Date, Date | undefined, Date>;
}

/** A regression that fired (migration 2026-12-07-insight-alerts): each fires once. */
export interface InsightAlertsTable {
  project_id: string;
  type: 'release.regression' | 'vitals.regression';
  /** What fires once: environment, release and metric, or route, metric and period (JSON). */
  alert_key: string;
  metric: string;
  environment: string | null;
  release: string | null;
  previous_release: string | null;
  route: string | null;
  period: string | null;
  /** The numbers that made it fire (the webhook's `data.regression`). */
  details: JSONColumnType<Record<string, unknown>>;
  /** The notification event written with it; null when no rule matched. */
  event_id: string | null;
  created_at: ColumnType<Date, Date | undefined, never>;
}

export type NewPageView = Insertable<PageViewsTable>;
export type NewClickFact = Insertable<ClickFactsTable>;
export type Funnel = Selectable<FunnelsTable>;
