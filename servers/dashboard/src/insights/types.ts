// The insights answers of the API (servers/api/README.md, Insights; the zod schemas of
// servers/api/src/modules/insights/*routes.ts and releases.ts), as the pages read them.

export const VITAL_NAMES = ['LCP', 'INP', 'CLS', 'FCP', 'TTFB'] as const;
export type VitalName = (typeof VITAL_NAMES)[number];
export type Rating = 'good' | 'needs-improvement' | 'poor';

/** One vital of `GET /v1/vitals`: the page views that reported it, p75, rating and shares (0..1). */
export interface VitalSummary {
  count: number;
  p75?: number;
  rating?: Rating;
  good: number;
  needsImprovement: number;
  poor: number;
}

export type VitalMetrics = Record<VitalName, VitalSummary>;

/** `GET /v1/vitals`. */
export interface VitalsAnswer {
  from: string;
  to: string;
  overall: { pageViews: number; metrics: VitalMetrics };
  routes: Array<{ route: string; pageViews: number; metrics: VitalMetrics }>;
  series: Array<{ day: string; pageViews: number; metrics: VitalMetrics }>;
}

export type HeatmapKind = 'click' | 'rageclick' | 'deadclick' | 'scroll';
export type Breakpoint = 'mobile' | 'tablet' | 'desktop';

export interface HeatmapPoint {
  pageX: number;
  pageY: number;
  elementX: number | null;
  elementY: number | null;
}

export interface HeatmapElement {
  selector: string | null;
  count: number;
  points: HeatmapPoint[];
}

/** `GET /v1/heatmaps`. */
export interface HeatmapAnswer {
  route: string;
  kind: HeatmapKind;
  breakpoint?: Breakpoint;
  from: string;
  to: string;
  total?: number;
  elements?: HeatmapElement[];
  pageViews?: number;
  medianPageHeight?: number;
  depths?: Array<{ depth: number; reached: number; share: number }>;
  backdrop?: { sessionId: string; offsetMs: number; replay: string };
}

/** A number of the overview next to the previous period's. */
export interface Compared {
  value: number | null;
  previous: number | null;
  change: number | null;
  relativeChange: number | null;
}

export interface OverviewVital extends Compared {
  count: number;
  rating: Rating | null;
  previousRating: Rating | null;
}

/** `GET /v1/dashboard/overview`. */
export interface Overview {
  from: string;
  to: string;
  previousFrom: string;
  sessions: Compared;
  users: Compared;
  errorRate: Compared;
  pageViews: Compared;
  rageClicks: Compared;
  deadClicks: Compared;
  vitals: Record<VitalName, OverviewVital>;
  calls: Compared;
  callQuality: Compared;
  connectFailureRate: Compared;
  topIssues: Array<{
    id: string;
    kind: string;
    title: string;
    severity: string;
    status: string;
    occurrences: Compared;
  }>;
}

/** One release of `GET /v1/releases`. */
export interface Release {
  release: string;
  firstSeenAt: string;
  lastSeenAt: string;
  sessions: number;
  users: number;
  sessionsWithErrors: number;
  errorRate: number;
  newIssues: number;
  calls: number;
  callQuality: number | null;
  poorCallRate: number | null;
  vitals: Record<VitalName, { count: number; p75: number | null; rating: Rating | null }>;
  /** The `release.regression`s that fired for it, oldest first; empty when none did. */
  regressions: ReleaseRegression[];
}

/** A share of a release in a regression: sessions with an error, or scored calls below 60. */
export interface RegressionShare {
  events: number;
  total: number;
  rate: number;
}

/** A `release.regression` of `GET /v1/releases` (the webhook's `data.regression`, and when it fired). */
export interface ReleaseRegression {
  metric: 'error_rate' | 'call_quality';
  environment: string | null;
  release: string;
  previousRelease: string;
  current: RegressionShare;
  previous: RegressionShare;
  z: number;
  pOneSided: number;
  alpha: number;
  minTotal: number;
  firedAt: string;
}

export type PropertyValue = string | number | boolean;

export type FunnelStep =
  | { type: 'pageview'; route: string }
  | { type: 'event'; name: string; properties?: Record<string, PropertyValue> }
  | { type: 'click'; selector: string };

export type CountBy = 'session' | 'user';

/** What `POST /v1/funnels` takes (and a suggestion's draft). */
export interface FunnelDraft {
  name: string;
  steps: FunnelStep[];
  windowMs: number;
  countBy: CountBy;
}

export interface Funnel extends FunnelDraft {
  id: string;
  createdBy?: string;
  createdAt: string;
  updatedAt: string;
}

export interface DroppedOff {
  sessionId: string;
  userId?: string;
  at: string;
  links: { replay: string };
}

/** `GET /v1/funnels/{id}/results`. */
export interface FunnelResults {
  funnelId: string;
  from: string;
  to: string;
  windowMs: number;
  countBy: CountBy;
  steps: Array<{
    step: FunnelStep;
    count: number;
    conversionFromPrevious: number | null;
    conversionFromFirst: number | null;
    medianTimeFromPreviousMs: number | null;
    droppedOffCount: number;
    droppedOff: DroppedOff[];
  }>;
}

/** `GET /v1/funnels/suggestions`. */
export interface FunnelSuggestions {
  items: Array<{ sessions: number; draft: FunnelDraft }>;
}
