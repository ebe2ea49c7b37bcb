// A session's facts (page views, clicks, rage and dead clicks, scroll depth, web vitals), derived
// from its wire events incrementally: the facts job feeds each run's new events to the state the
// previous run left (servers/api/README.md, Insights). Feeding the events in any number of runs
// gives exactly the facts of one run over all of them (the property test says so).
//
// Masked text never enters a fact: routes are URL paths, selectors are tag names, ids and class
// names (selector.ts), positions are numbers.

import { applyMutation, type DomMirror, mirrorOf } from './dom-mirror.ts';
import { normalizeRoute } from './route.ts';
import { type SnapshotNode, selectorOf } from './selector.ts';

/** A wire event as stored in a session's chunks; only `t`, `type` and a few fields are read. */
export interface FactEvent {
  t: number;
  type: string;
  data?: unknown;
  url?: unknown;
  load?: unknown;
  name?: unknown;
  value?: unknown;
}

type Breakpoint = 'mobile' | 'tablet' | 'desktop';
type VitalName = 'LCP' | 'INP' | 'CLS' | 'FCP' | 'TTFB';
const VITAL_NAMES: readonly VitalName[] = ['LCP', 'INP', 'CLS', 'FCP', 'TTFB'];

/** One page view as it stands (the current one may still grow). */
export interface PageViewFact {
  viewIndex: number;
  startedAt: number;
  /** The next page view's start, or the last event seen on this one. */
  endedAt: number;
  route: string;
  viewportWidth: number | null;
  breakpoint: Breakpoint | null;
  pageHeight: number | null;
  scrollDepth: number | null;
  clicks: number;
  rageClicks: number;
  deadClicks: number;
  vitals: Partial<Record<VitalName, number>>;
}

/** A click, a rage click (a burst, at its first click) or a dead click. */
export interface ClickFact {
  kind: 'click' | 'rage' | 'dead';
  /** The (first) click's index among the session's clicks. */
  ordinal: number;
  viewIndex: number;
  t: number;
  route: string;
  breakpoint: Breakpoint | null;
  selector: string | null;
  pageX: number;
  pageY: number;
  elementX: number | null;
  elementY: number | null;
  count: number;
}

/** The thresholds of the issue: 3 clicks within 1 s within 30 px; no answer within 1 s. */
const LIMITS = { rageCount: 3, rageWindowMs: 1000, rageRadiusPx: 30, deadWindowMs: 1000 } as const;

/** rrweb's event types, incremental sources and mouse interaction types read here. */
const RRWEB = {
  fullSnapshot: 2,
  incremental: 3,
  meta: 4,
  mutation: 0,
  mouseInteraction: 2,
  scroll: 3,
  viewportResize: 4,
  input: 5,
  click: 2,
} as const;

interface Burst {
  /** The first click, as a fact (kind `rage` once it is one). */
  first: ClickFact;
  /** The first click's position in the viewport (as rrweb reports clicks). */
  x: number;
  y: number;
  /** The times of the last two clicks (the last one last). */
  recent: number[];
  count: number;
  rage: boolean;
}

/** Where a session's facts stand between two runs (kept as JSON). */
export interface FactsState {
  /** The page view events go to, if any. */
  view: PageViewFact | null;
  /** The page view of the last page load (web vitals go to it), when it is not `view`. */
  loadView: PageViewFact | null;
  /** The current view's path (routes are compared by path). */
  path: string | null;
  nextViewIndex: number;
  nextOrdinal: number;
  /** The document's scroll and the viewport, as rrweb last reported them. */
  scrollX: number;
  scrollY: number;
  viewportWidth: number | null;
  viewportHeight: number | null;
  pageHeight: number | null;
  /** The rrweb id of the document node (its scroll is the page's). */
  documentId: number | null;
  /** The element tree (dom-mirror.ts), as its root. */
  tree: SnapshotNode | null;
  burst: Burst | null;
  /** Clicks not yet known to be dead or answered (each within 1 s of the latest event). */
  pending: ClickFact[];
}

/** What a run changed: the page views it touched (each as it now stands) and the new click facts. */
export interface FactsChanges {
  views: PageViewFact[];
  clicks: ClickFact[];
}

/** The state of a session no event was fed to yet. */
export function startFacts(): FactsState {
  return {
    view: null,
    loadView: null,
    path: null,
    nextViewIndex: 0,
    nextOrdinal: 0,
    scrollX: 0,
    scrollY: 0,
    viewportWidth: null,
    viewportHeight: null,
    pageHeight: null,
    documentId: null,
    tree: null,
    burst: null,
    pending: [],
  };
}

/**
 * The breakpoint of a viewport width: `mobile` below 768 px, `tablet` below 1024 px, `desktop`
 * from 1024 px (the widths Tailwind's `md` and `lg` and most CSS frameworks break at).
 *
 * @example
 * ```ts
 * breakpointOf(390); // 'mobile'
 * ```
 */
function breakpointOf(width: number | null): Breakpoint | null {
  if (width === null) return null;
  return width < 768 ? 'mobile' : width < 1024 ? 'tablet' : 'desktop';
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null;
}

const finite = (value: unknown): value is number => typeof value === 'number' && Number.isFinite(value);

/** A URL's path (no origin, query or hash), the way page views are told apart. */
function pathOf(url: string): string {
  return url.replace(/^[a-z][a-z0-9+.-]*:\/\/[^/]*/i, '').replace(/[?#].*$/s, '') || '/';
}

/**
 * Feeds a run's events (in the order the SDK wrote them) to `state` and returns what changed. `context.url` is
 * the session's first URL: the page view of events that come before any page load or navigation.
 * `context.routePatterns` are the project's route patterns (`normalizeRoute`).
 *
 * - A page view starts at a page load (the SDK's `nav` event with `load: true`, sent as it starts
 *   on the page, before the page's vitals and recording; from older SDKs, an rrweb Meta event
 *   whose path differs from the current view's) and at the app's own navigation (`nav`) to
 *   another path. rrweb's periodic checkout of the same path stays one view. Its time on page
 *   runs to the next view's start, else to its last event.
 * - Clicks (rrweb MouseInteraction Click) are facts with the target's selector from the element
 *   tree (full snapshot and mutations), the position on the page (the viewport position plus the
 *   document's scroll) and within the element (the SDK's `ox`/`oy` fractions, when sent).
 * - Rage clicks: bursts of clicks each at most 1 s after the previous and within 30 px of the
 *   burst's first, with 3 clicks within 1 s (`findRageClicks`); one fact per burst, once no
 *   click can join it any more (an event more than 1 s after its last click, another click that
 *   does not join, or the end of the page view).
 * - Dead clicks: clicks that no DOM change (mutation, input) or navigation answered within 1 s
 *   (`findDeadClicks`); judged once an event more than 1 s after the click is seen.
 * - Scroll depth: the deepest viewport bottom (document scroll plus viewport height), capped by
 *   the page height when the SDK sent one (`dh`).
 * - Web vitals go to the page view of the last page load (a single-page app's later routes do
 *   not load a page: web-vitals measures the load).
 */
export function addFactEvents(
  state: FactsState,
  events: readonly FactEvent[],
  context: { url: string | null; routePatterns: readonly string[] },
): FactsChanges {
  const touched = new Map<number, PageViewFact>();
  const clicks: ClickFact[] = [];
  let mirror: DomMirror | null = state.tree === null ? null : mirrorOf(state.tree);
  const touch = (view: PageViewFact | null) => {
    if (view !== null) touched.set(view.viewIndex, view);
  };

  const closeBurst = () => {
    const burst = state.burst;
    state.burst = null;
    if (burst === null || !burst.rage) return;
    clicks.push({ ...burst.first, kind: 'rage', count: burst.count });
    const owner = [state.view, state.loadView].find((view) => view?.viewIndex === burst.first.viewIndex);
    if (owner !== undefined && owner !== null) {
      owner.rageClicks += 1;
      touch(owner);
    }
  };
  /** Clicks whose second has passed by `t` unanswered are dead. */
  const judge = (t: number) => {
    while (state.pending.length > 0 && (state.pending[0] as ClickFact).t + LIMITS.deadWindowMs < t) {
      const click = state.pending.shift() as ClickFact;
      clicks.push({ ...click, kind: 'dead' });
      const owner = [state.view, state.loadView].find((view) => view?.viewIndex === click.viewIndex);
      if (owner !== undefined && owner !== null) {
        owner.deadClicks += 1;
        touch(owner);
      }
    }
  };
  const startView = (t: number, url: string, load: boolean) => {
    // The page changed: what was pending is answered; a burst ends with its page.
    state.pending = [];
    closeBurst();
    const view: PageViewFact = {
      viewIndex: state.nextViewIndex++,
      startedAt: t,
      endedAt: t,
      route: normalizeRoute(url, context.routePatterns),
      viewportWidth: state.viewportWidth,
      breakpoint: breakpointOf(state.viewportWidth),
      pageHeight: null,
      scrollDepth: null,
      clicks: 0,
      rageClicks: 0,
      deadClicks: 0,
      vitals: {},
    };
    if (state.view !== null) {
      state.view.endedAt = t;
      touch(state.view);
    }
    // A new page or route: its height is unknown until the SDK says it again.
    state.pageHeight = null;
    if (load) {
      state.loadView = null;
      state.scrollX = 0;
      state.scrollY = 0;
    } else if (state.view !== null && state.loadView === null) {
      // The view that loaded the page stays where its vitals go.
      state.loadView = state.view;
    }
    state.view = view;
    state.path = pathOf(url);
    deepen(view);
    touch(view);
  };
  const ensureView = (t: number) => {
    if (state.view === null) startView(t, context.url ?? '/', true);
    return state.view as PageViewFact;
  };
  const deepen = (view: PageViewFact) => {
    if (state.viewportHeight === null) return;
    let depth = Math.round(state.scrollY + state.viewportHeight);
    if (state.pageHeight !== null) depth = Math.min(depth, state.pageHeight);
    if (view.scrollDepth === null || depth > view.scrollDepth) view.scrollDepth = depth;
    if (state.pageHeight !== null) view.pageHeight = state.pageHeight;
  };

  for (const event of events) {
    judge(event.t);
    if (state.burst !== null && event.t - (state.burst.recent.at(-1) as number) > LIMITS.rageWindowMs)
      closeBurst();

    if (event.type === 'nav' && typeof event.url === 'string') {
      // A page load (`load: true`) is always a new page view; the app's own navigation only to
      // another path.
      const load = event.load === true;
      if (load || state.view === null || pathOf(event.url) !== state.path)
        startView(event.t, event.url, load);
      else state.pending = [];
      state.view = state.view as PageViewFact;
      state.view.endedAt = Math.max(state.view.endedAt, event.t);
      touch(state.view);
      continue;
    }
    if (event.type === 'vital') {
      const view = state.loadView ?? ensureView(event.t);
      if (
        typeof event.name === 'string' &&
        VITAL_NAMES.includes(event.name as VitalName) &&
        finite(event.value)
      ) {
        view.vitals[event.name as VitalName] = event.value;
        touch(view);
      }
      if (view === state.view) view.endedAt = Math.max(view.endedAt, event.t);
      continue;
    }
    if (event.type !== 'rrweb' || !isRecord(event.data)) {
      if (state.view !== null) {
        state.view.endedAt = Math.max(state.view.endedAt, event.t);
        touch(state.view);
      }
      continue;
    }
    const rrweb = event.data;
    const data = isRecord(rrweb.data) ? rrweb.data : {};
    if (rrweb.type === RRWEB.meta) {
      if (finite(data.width)) state.viewportWidth = data.width;
      if (finite(data.height)) state.viewportHeight = data.height;
      const href = typeof data.href === 'string' ? data.href : (context.url ?? '/');
      if (state.view === null || pathOf(href) !== state.path) startView(event.t, href, true);
      else state.pending = [];
      if (finite(data.dh)) state.pageHeight = data.dh;
      const view = state.view as PageViewFact;
      if (view.viewportWidth === null && state.viewportWidth !== null) {
        view.viewportWidth = state.viewportWidth;
        view.breakpoint = breakpointOf(state.viewportWidth);
      }
      deepen(view);
      view.endedAt = Math.max(view.endedAt, event.t);
      touch(view);
      continue;
    }
    const view = ensureView(event.t);
    view.endedAt = Math.max(view.endedAt, event.t);
    touch(view);
    if (rrweb.type === RRWEB.fullSnapshot) {
      mirror = mirrorOf(data.node);
      state.documentId = mirror?.root.id ?? null;
      const offset = isRecord(data.initialOffset) ? data.initialOffset : {};
      state.scrollX = finite(offset.left) ? offset.left : 0;
      state.scrollY = finite(offset.top) ? offset.top : 0;
      state.pending = [];
      deepen(view);
      continue;
    }
    if (rrweb.type !== RRWEB.incremental) continue;
    switch (data.source) {
      case RRWEB.mutation:
        if (mirror !== null) applyMutation(mirror, data);
        state.pending = [];
        break;
      case RRWEB.input:
        state.pending = [];
        break;
      case RRWEB.viewportResize:
        if (finite(data.width)) state.viewportWidth = data.width;
        if (finite(data.height)) state.viewportHeight = data.height;
        if (view.viewportWidth === null && state.viewportWidth !== null) {
          view.viewportWidth = state.viewportWidth;
          view.breakpoint = breakpointOf(state.viewportWidth);
        }
        deepen(view);
        break;
      case RRWEB.scroll:
        if (data.id === state.documentId && finite(data.x) && finite(data.y)) {
          state.scrollX = data.x;
          state.scrollY = data.y;
          if (finite(data.dh)) state.pageHeight = data.dh;
          deepen(view);
        }
        break;
      case RRWEB.mouseInteraction: {
        if (data.type !== RRWEB.click || typeof data.id !== 'number' || !finite(data.x) || !finite(data.y))
          break;
        const click: ClickFact = {
          kind: 'click',
          ordinal: state.nextOrdinal++,
          viewIndex: view.viewIndex,
          t: event.t,
          route: view.route,
          breakpoint: view.breakpoint,
          selector: mirror === null ? null : selectorOf(mirror.index, data.id),
          pageX: Math.round(data.x + state.scrollX),
          pageY: Math.round(data.y + state.scrollY),
          elementX: finite(data.ox) ? Math.min(1, Math.max(0, data.ox)) : null,
          elementY: finite(data.oy) ? Math.min(1, Math.max(0, data.oy)) : null,
          count: 1,
        };
        clicks.push(click);
        view.clicks += 1;
        state.pending.push(click);
        // Rage: join the burst (within 1 s of its last click, 30 px of its first) or start one.
        const burst = state.burst;
        const x = data.x;
        const y = data.y;
        if (
          burst !== null &&
          event.t - (burst.recent.at(-1) as number) <= LIMITS.rageWindowMs &&
          Math.hypot(x - burst.x, y - burst.y) <= LIMITS.rageRadiusPx
        ) {
          burst.count += 1;
          if (
            burst.recent.length >= LIMITS.rageCount - 1 &&
            event.t - (burst.recent[0] as number) <= LIMITS.rageWindowMs
          )
            burst.rage = true;
          burst.recent = [...burst.recent, event.t].slice(-(LIMITS.rageCount - 1));
        } else {
          closeBurst();
          state.burst = { first: click, x, y, recent: [event.t], count: 1, rage: false };
        }
        break;
      }
    }
  }
  state.tree = mirror?.root ?? null;
  return { views: [...touched.values()].sort((a, b) => a.viewIndex - b.viewIndex), clicks };
}
