import pg from 'pg';
import { monotonicFactory } from 'ulid';
import { rateVital } from '../src/modules/insights/vitals.ts';
import { createRandom, pick, type Weighted } from './random.ts';

// Bulk-seeds the insight facts of sessions already seeded (bench/seed-sessions.ts) straight into
// PostgreSQL, shaped like what the facts job, processing and ingest write
// (src/modules/insights/facts-job.ts, migration 2026-12-06-insights): `page_views` (route,
// viewport and breakpoint, scroll depth, click counts, web vitals of page loads, the session's
// device, browser, release and environment), `click_facts` (clicks over ~200 selectors, rage
// bursts with their clicks, dead clicks), custom events in `session_signals` (a signup funnel
// and others), some `calls` with quality scores and issue clusters with their occurrences (the
// sessions with errors). Generated here with a seeded PRNG, in session order, and inserted with
// a few multi-row statements per 10,000 sessions (unnest of arrays): every run seeds the same
// rows relative to the sessions' start times.

/** ~50 routes, most popular first (their weight falls as 1 / rank). */
export const ROUTES: readonly string[] = [
  '/',
  '/pricing',
  '/products',
  '/products/:id',
  '/dashboard',
  '/signup',
  '/login',
  '/cart',
  '/checkout',
  '/search',
  '/docs',
  '/docs/:slug',
  '/blog',
  '/blog/:slug',
  '/settings/profile',
  '/settings/billing',
  '/settings/team',
  '/settings/security',
  '/orders',
  '/orders/:id',
  '/account',
  '/help',
  '/help/:slug',
  '/about',
  '/contact',
  '/careers',
  '/careers/:id',
  '/changelog',
  '/integrations',
  '/integrations/:slug',
  '/reports',
  '/reports/weekly',
  '/reports/:id',
  '/projects',
  '/projects/:id',
  '/projects/:id/settings',
  '/projects/:id/members',
  '/invoices',
  '/invoices/:id',
  '/notifications',
  '/onboarding',
  '/onboarding/team',
  '/onboarding/done',
  '/customers',
  '/customers/:id',
  '/legal/terms',
  '/legal/privacy',
  '/status',
  '/compare/:slug',
  '/wishlist',
];
const ROUTE_WEIGHTS: Weighted<string> = ROUTES.map((route, rank) => [route, 1 / (rank + 1)]);

/** Selectors on every page (header and footer). */
const SHARED_SELECTORS = [
  'header > nav > a.logo',
  'header > nav > a.nav-link:nth-of-type(1)',
  'header > nav > a.nav-link:nth-of-type(2)',
  'header > nav > a.nav-link:nth-of-type(3)',
  'header > nav > button#menu',
  'header > nav > button.search',
  'header > div.account > button.avatar',
  'footer > a.legal',
  'footer > a.status',
  'div#cookie-banner > button.accept',
];
/** The funnel's click step: the plan button on /pricing. */
export const FUNNEL_SELECTOR = 'main.pricing > section.plans > button.choose';
/** Route-specific selectors: 4 per route (~200 with the shared ones). */
function routeSelectors(route: string): string[] {
  const name = route === '/' ? 'home' : route.slice(1).replaceAll('/:', '-').replaceAll('/', '-');
  const selectors = [
    `main.${name} > section.hero > a.cta`,
    `main.${name} > div.content > button.primary`,
    `main.${name} > div.content > a.card:nth-of-type(2)`,
    `main.${name} > aside > a.link`,
  ];
  if (route === '/pricing') selectors[1] = FUNNEL_SELECTOR;
  return selectors;
}
const SELECTORS = new Map(ROUTES.map((route) => [route, routeSelectors(route)]));

/** Viewport widths (and heights) per device. */
const VIEWPORTS: Record<string, Weighted<[number, number]>> = {
  desktop: [
    [[1920, 960], 30],
    [[1536, 750], 20],
    [[1440, 800], 20],
    [[1366, 660], 15],
    [[1280, 720], 15],
  ],
  tablet: [
    [[768, 1000], 40],
    [[810, 1080], 30],
    [[820, 1100], 30],
  ],
  mobile: [
    [[390, 750], 35],
    [[412, 800], 25],
    [[375, 670], 20],
    [[360, 640], 10],
    [[430, 830], 10],
  ],
};

/** Custom events other than the funnel's, per session (share of sessions). */
const OTHER_EVENTS: ReadonlyArray<[string, number, () => Record<string, unknown>]> = [
  ['search', 0.15, () => ({ results: 10 })],
  ['add_to_cart', 0.1, () => ({ sku: 'sku-1' })],
  ['share', 0.03, () => ({ via: 'link' })],
];

export interface SeededInsights {
  pageViews: number;
  clicks: number;
  rageClicks: number;
  deadClicks: number;
  customEvents: number;
  /** Sessions that walked each step of the funnel `/` → `/pricing` → plan click → `signup`. */
  funnelSessions: [number, number, number, number];
  calls: number;
  clusters: number;
  occurrences: number;
  /** The route with most page views. */
  popularRoute: string;
  seconds: number;
}

/** A click's place: its ordinal in the session, target and positions. */
interface ClickPlace {
  ordinal: number;
  selector: string | null;
  x: number;
  y: number;
  ex: number | null;
  ey: number | null;
}

interface SessionRow {
  id: string;
  started: number;
  device: string | null;
  browser_name: string | null;
  release: string | null;
  environment: string | null;
  user_id: string | null;
  error_count: number;
}

/** A normal deviate (Box–Muller). */
function normal(random: () => number): number {
  return Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random());
}
/** Log-normal around `median`. */
const logNormal = (random: () => number, median: number, sigma: number) =>
  median * Math.exp(sigma * normal(random));
const breakpointOf = (width: number) => (width < 768 ? 'mobile' : width < 1024 ? 'tablet' : 'desktop');

type Columns<T extends string> = Record<T, unknown[]>;
function columns<T extends string>(names: readonly T[]): Columns<T> {
  return Object.fromEntries(names.map((name) => [name, []])) as unknown as Columns<T>;
}

const VIEW_COLUMNS = [
  'session_id',
  'view_index',
  'started',
  'ended',
  'route',
  'viewport_width',
  'breakpoint',
  'page_height',
  'scroll_depth',
  'clicks',
  'rage_clicks',
  'dead_clicks',
  'lcp',
  'inp',
  'cls',
  'fcp',
  'ttfb',
  'device',
  'browser_name',
  'release',
  'environment',
] as const;
const CLICK_COLUMNS = [
  'session_id',
  'kind',
  'ordinal',
  'view_index',
  't',
  'route',
  'breakpoint',
  'selector',
  'page_x',
  'page_y',
  'element_x',
  'element_y',
  'count',
] as const;
const EVENT_COLUMNS = ['session_id', 'event_index', 't', 'name', 'details'] as const;

/**
 * Seeds the insight facts of the project's seeded sessions (all of them, in id order), plus
 * `calls` calls and `clusters` issue clusters, then ANALYZEs the tables.
 *
 * @example
 * ```ts
 * await seedSessions(databaseUrl, projectId, 100_000, now);
 * const seeded = await seedInsights(databaseUrl, projectId);
 * ```
 */
export async function seedInsights(
  databaseUrl: string,
  projectId: string,
  options: { callShare?: number; clusters?: number } = {},
): Promise<SeededInsights> {
  const started = performance.now();
  const random = createRandom(22_2026);
  const nextUlid = monotonicFactory(() => random());
  const callShare = options.callShare ?? 0.05;
  const clusterCount = options.clusters ?? 60;
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  const totals = {
    pageViews: 0,
    clicks: 0,
    rageClicks: 0,
    deadClicks: 0,
    customEvents: 0,
    funnelSessions: [0, 0, 0, 0] as [number, number, number, number],
    calls: 0,
    occurrences: 0,
  };
  const routeViews = new Map<string, number>();
  try {
    const { rows: sessions } = await client.query<SessionRow>(
      `select id, (extract(epoch from started_at) * 1000)::float8 as started, device, browser_name, release,
         environment, user_id, error_count
       from sessions where project_id = $1 order by id`,
      [projectId],
    );
    const clusterIds = Array.from({ length: clusterCount }, () => `cl_${nextUlid(0)}`);
    const clusterWeights: Weighted<number> = clusterIds.map((_, rank) => [rank, 1 / (rank + 1) ** 1.2]);
    await client.query(
      `insert into issue_clusters (project_id, id, fingerprint, kind, title, severity, first_seen_at, last_seen_at)
       select $1, c.id, 'error:bench-' || c.n, 'error', 'TypeError: bench error ' || c.n,
         (array['critical', 'high', 'medium'])[1 + c.n % 3], now(), now()
       from unnest($2::text[]) with ordinality as c(id, n)`,
      [projectId, clusterIds],
    );

    const batch = 10_000;
    for (let offset = 0; offset < sessions.length; offset += batch) {
      const views = columns(VIEW_COLUMNS);
      const clicks = columns(CLICK_COLUMNS);
      const events = columns(EVENT_COLUMNS);
      const calls = columns([
        'id',
        'session_id',
        'started',
        'duration',
        'connected',
        'quality',
        'device',
        'browser_name',
        'release',
        'environment',
        'end_user_id',
      ] as const);
      const occurrences = columns([
        'session_id',
        'key',
        'cluster_id',
        't',
        'release',
        'environment',
      ] as const);
      for (const session of sessions.slice(offset, offset + batch)) {
        const device = session.device ?? 'desktop';
        const [width, height] = pick(
          random,
          VIEWPORTS[device] ?? (VIEWPORTS.desktop as Weighted<[number, number]>),
        );
        const breakpoint = breakpointOf(width);
        const browser = session.browser_name ?? 'Chrome';
        // Page views: 1 + a geometric number (mean ~3 in all), capped at 12.
        const viewCount = Math.min(12, 1 + Math.floor(-2.2 * Math.log(1 - random())));
        let t = session.started;
        let route = random() < 0.3 ? '/' : pick(random, ROUTE_WEIGHTS);
        let funnelStep = route === '/' ? 1 : 0;
        let ordinal = 0;
        let signupAt: number | undefined;
        for (let viewIndex = 0; viewIndex < viewCount; viewIndex += 1) {
          if (viewIndex > 0) {
            // The funnel's path first, else any route (a reload of the same route now and then).
            if (funnelStep === 1 && route === '/' && random() < 0.35) route = '/pricing';
            else if (funnelStep === 3 && route === '/pricing' && random() < 0.6) route = '/signup';
            else route = pick(random, ROUTE_WEIGHTS);
            if (funnelStep === 1 && route === '/pricing') funnelStep = 2;
            else if (funnelStep === 3 && route === '/signup') funnelStep = 4;
          }
          routeViews.set(route, (routeViews.get(route) ?? 0) + 1);
          const duration = Math.round(Math.min(30 * 60_000, logNormal(random, 25_000, 1)));
          const viewStart = t;
          t += duration;
          // The first view loads the page; later ones are the app's own navigation half the time.
          const load = viewIndex === 0 || random() < 0.5;
          const pageHeight = Math.round(Math.max(height, logNormal(random, 2_400, 0.5)));
          const scrollDepth = Math.round(
            Math.min(pageHeight, height + random() ** 1.5 * (pageHeight - height)),
          );
          const selectors = [...SHARED_SELECTORS.slice(0, 4), ...(SELECTORS.get(route) as string[])];
          const clickCount = Math.floor(-1.7 * Math.log(1 - random()));
          let viewClicks = 0;
          let rage = 0;
          let dead = 0;
          const clickAt = (offsetMs: number) =>
            viewStart + Math.round(Math.min(duration - 1, Math.max(0, offsetMs)));
          const addClick = (kind: 'click' | 'rage' | 'dead', at: number, click: ClickPlace, count = 1) => {
            clicks.session_id.push(session.id);
            clicks.kind.push(kind);
            clicks.ordinal.push(click.ordinal);
            clicks.view_index.push(viewIndex);
            clicks.t.push(at);
            clicks.route.push(route);
            clicks.breakpoint.push(breakpoint);
            clicks.selector.push(click.selector);
            clicks.page_x.push(click.x);
            clicks.page_y.push(click.y);
            clicks.element_x.push(click.ex);
            clicks.element_y.push(click.ey);
            clicks.count.push(count);
          };
          const place = (selector: string | null): ClickPlace => {
            const old = random() < 0.1;
            return {
              ordinal: ordinal++,
              selector,
              x: Math.floor(random() * width),
              y: Math.floor(random() * scrollDepth),
              ex: old ? null : Math.round(random() * 100) / 100,
              ey: old ? null : Math.round(random() * 100) / 100,
            };
          };
          for (let index = 0; index < clickCount; index += 1) {
            // Popular elements get most clicks; 2% of clicks hit an element the snapshot lacked.
            const selector =
              random() < 0.02 ? null : (selectors[Math.floor(selectors.length * random() ** 2)] as string);
            const at = clickAt(((index + 1) * duration) / (clickCount + 2));
            const click = place(selector);
            addClick('click', at, click);
            viewClicks += 1;
            if (random() < 0.08) {
              addClick('dead', at, click);
              dead += 1;
            }
            if (random() < 0.02) {
              // A rage burst: this click and 2–5 more within a second.
              const more = 2 + Math.floor(random() * 4);
              for (let extra = 1; extra <= more; extra += 1) {
                const next = place(selector);
                addClick('click', at + extra * 150, { ...next, x: click.x + extra, y: click.y });
              }
              viewClicks += more;
              addClick('rage', at, click, 1 + more);
              rage += 1;
            }
          }
          if (route === '/pricing' && funnelStep === 2 && random() < 0.4) {
            const click = place(FUNNEL_SELECTOR);
            addClick('click', clickAt(duration / 2), click);
            viewClicks += 1;
            funnelStep = 3;
          }
          if (route === '/signup' && funnelStep === 4 && random() < 0.5) signupAt = clickAt(duration - 2_000);
          totals.clicks += viewClicks;
          totals.rageClicks += rage;
          totals.deadClicks += dead;
          // Web vitals of page loads: Safari reports neither LCP nor INP, Firefox no INP.
          const vital = (value: number, reported = true) => (load && reported ? value : null);
          views.session_id.push(session.id);
          views.view_index.push(viewIndex);
          views.started.push(viewStart);
          views.ended.push(t);
          views.route.push(route);
          views.viewport_width.push(width);
          views.breakpoint.push(breakpoint);
          views.page_height.push(pageHeight);
          views.scroll_depth.push(scrollDepth);
          views.clicks.push(viewClicks);
          views.rage_clicks.push(rage);
          views.dead_clicks.push(dead);
          views.lcp.push(vital(Math.round(logNormal(random, 2_100, 0.5)), browser !== 'Safari'));
          views.inp.push(
            vital(
              Math.round(logNormal(random, 160, 0.6)),
              viewClicks > 0 && browser !== 'Safari' && browser !== 'Firefox',
            ),
          );
          views.cls.push(vital(Math.round(logNormal(random, 0.03, 1.2) * 1000) / 1000));
          views.fcp.push(vital(Math.round(logNormal(random, 1_300, 0.45))));
          views.ttfb.push(vital(Math.round(logNormal(random, 420, 0.6))));
          views.device.push(session.device);
          views.browser_name.push(session.browser_name);
          views.release.push(session.release);
          views.environment.push(session.environment);
          totals.pageViews += 1;
        }
        for (let step = 0; step < Math.min(funnelStep, 3); step += 1)
          totals.funnelSessions[step] = (totals.funnelSessions[step] as number) + 1;
        // Custom events (seq 0, after the seeded signals' indexes).
        let eventIndex = 100;
        const addEvent = (name: string, at: number, props: Record<string, unknown>) => {
          events.session_id.push(session.id);
          events.event_index.push(eventIndex++);
          events.t.push(at);
          events.name.push(name);
          events.details.push(JSON.stringify({ props }));
          totals.customEvents += 1;
        };
        if (signupAt !== undefined) {
          addEvent('signup', signupAt, { plan: random() < 0.7 ? 'pro' : 'team' });
          totals.funnelSessions[3] += 1;
        }
        for (const [name, share, props] of OTHER_EVENTS)
          if (random() < share)
            addEvent(name, session.started + Math.floor(random() * (t - session.started)), props());
        // Calls: a share of sessions has one; 5% never connect, 10% of the others unscored.
        if (random() < callShare) {
          const connected = random() >= 0.05;
          calls.id.push(`call_${nextUlid(session.started)}`);
          calls.session_id.push(session.id);
          calls.started.push(session.started + 2_000);
          calls.duration.push(Math.round(logNormal(random, 180_000, 0.8)));
          calls.connected.push(connected);
          calls.quality.push(
            connected && random() >= 0.1
              ? Math.max(0, Math.min(100, Math.round(82 + 12 * normal(random))))
              : null,
          );
          calls.device.push(session.device);
          calls.browser_name.push(session.browser_name);
          calls.release.push(session.release);
          calls.environment.push(session.environment);
          calls.end_user_id.push(session.user_id);
          totals.calls += 1;
        }
        // Issue occurrences: each of the session's errors, in a cluster (a few clusters hold most).
        for (let index = 0; index < session.error_count; index += 1) {
          occurrences.session_id.push(session.id);
          occurrences.key.push(`error:0:${index}`);
          occurrences.cluster_id.push(clusterIds[pick(random, clusterWeights)]);
          occurrences.t.push(session.started + index * 1000);
          occurrences.release.push(session.release);
          occurrences.environment.push(session.environment);
          totals.occurrences += 1;
        }
      }
      await client.query(
        `insert into page_views (project_id, session_id, view_index, started_at, day, ended_at, duration_ms, route,
           viewport_width, breakpoint, page_height, scroll_depth, clicks, rage_clicks, dead_clicks, lcp, inp, cls,
           fcp, ttfb, device, browser_name, release, environment)
         select $1, v.session_id, v.view_index, to_timestamp(v.started / 1000.0),
           (to_timestamp(v.started / 1000.0) at time zone 'UTC')::date, to_timestamp(v.ended / 1000.0),
           v.ended - v.started, v.route, v.viewport_width, v.breakpoint, v.page_height, v.scroll_depth, v.clicks,
           v.rage_clicks, v.dead_clicks, v.lcp, v.inp, v.cls, v.fcp, v.ttfb, v.device, v.browser_name, v.release,
           v.environment
         from unnest($2::text[], $3::int[], $4::bigint[], $5::bigint[], $6::text[], $7::int[], $8::text[],
           $9::int[], $10::int[], $11::int[], $12::int[], $13::int[], $14::float8[], $15::float8[],
           $16::float8[], $17::float8[], $18::float8[], $19::text[], $20::text[], $21::text[], $22::text[])
           as v(${VIEW_COLUMNS.join(', ')})`,
        [projectId, ...VIEW_COLUMNS.map((name) => views[name])],
      );
      await client.query(
        `insert into click_facts (project_id, session_id, kind, ordinal, view_index, t, day, route, breakpoint,
           selector, page_x, page_y, element_x, element_y, count)
         select $1, c.session_id, c.kind, c.ordinal, c.view_index, to_timestamp(c.t / 1000.0),
           (to_timestamp(c.t / 1000.0) at time zone 'UTC')::date, c.route, c.breakpoint, c.selector, c.page_x,
           c.page_y, c.element_x, c.element_y, c.count
         from unnest($2::text[], $3::text[], $4::int[], $5::int[], $6::bigint[], $7::text[], $8::text[],
           $9::text[], $10::int[], $11::int[], $12::real[], $13::real[], $14::int[])
           as c(${CLICK_COLUMNS.join(', ')})`,
        [projectId, ...CLICK_COLUMNS.map((name) => clicks[name])],
      );
      await client.query(
        `insert into session_signals (project_id, session_id, seq, event_index, t, kind, severity, name, details)
         select $1, e.session_id, 0, e.event_index, to_timestamp(e.t / 1000.0), 'custom', null, e.name,
           e.details::jsonb
         from unnest($2::text[], $3::int[], $4::bigint[], $5::text[], $6::text[]) as e(${EVENT_COLUMNS.join(', ')})`,
        [projectId, ...EVENT_COLUMNS.map((name) => events[name])],
      );
      await client.query(
        `insert into calls (project_id, id, session_id, pc, started_at, last_item_at, ended_at, duration_ms, state,
           end_reason, setup_ms, connected, failed_to_connect, failure_reason, relayed, local_types, remote_types,
           network_type, browser_name, device, release, environment, end_user_id, quality_score, codecs,
           sample_count, track_count, issue_kinds, issue_count, has_issue, series)
         select $1, c.id, c.session_id, 'pc_' || c.id, to_timestamp(c.started / 1000.0),
           to_timestamp((c.started + c.duration) / 1000.0), to_timestamp((c.started + c.duration) / 1000.0),
           c.duration, 'closed', 'closed', case when c.connected then 150 + c.duration % 400 end, c.connected,
           not c.connected, case when not c.connected then 'ice_failed' end, c.duration % 10 = 0, '[]', '[]',
           'wifi', c.browser_name, c.device, c.release, c.environment, c.end_user_id, c.quality,
           '[]', c.duration / 5000, 4, '[]', 0, false, '{}'
         from unnest($2::text[], $3::text[], $4::bigint[], $5::bigint[], $6::boolean[], $7::smallint[],
           $8::text[], $9::text[], $10::text[], $11::text[], $12::text[])
           as c(id, session_id, started, duration, connected, quality, device, browser_name, release,
             environment, end_user_id)`,
        [
          projectId,
          calls.id,
          calls.session_id,
          calls.started,
          calls.duration,
          calls.connected,
          calls.quality,
          calls.device,
          calls.browser_name,
          calls.release,
          calls.environment,
          calls.end_user_id,
        ],
      );
      await client.query(
        `insert into cluster_occurrences (project_id, session_id, occurrence_key, cluster_id, t, seen_at, release,
           environment)
         select $1, o.session_id, o.key, o.cluster_id, to_timestamp(o.t / 1000.0), to_timestamp(o.t / 1000.0),
           o.release, o.environment
         from unnest($2::text[], $3::text[], $4::text[], $5::bigint[], $6::text[], $7::text[])
           as o(session_id, key, cluster_id, t, release, environment)`,
        [
          projectId,
          occurrences.session_id,
          occurrences.key,
          occurrences.cluster_id,
          occurrences.t,
          occurrences.release,
          occurrences.environment,
        ],
      );
    }
    await client.query(
      `update issue_clusters set first_seen_at = o.first, last_seen_at = o.last
       from (select cluster_id, min(t) as first, max(t) as last from cluster_occurrences
             where project_id = $1 group by cluster_id) as o
       where issue_clusters.project_id = $1 and issue_clusters.id = o.cluster_id`,
      [projectId],
    );
    for (const table of [
      'page_views',
      'click_facts',
      'session_signals',
      'calls',
      'issue_clusters',
      'cluster_occurrences',
    ])
      await client.query(`analyze ${table}`);
  } finally {
    await client.end();
  }
  const popularRoute = [...routeViews].sort((left, right) => right[1] - left[1])[0]?.[0] ?? '/';
  return {
    ...totals,
    clusters: clusterCount,
    popularRoute,
    seconds: (performance.now() - started) / 1000,
  };
}

// Sessions as the browser SDK records them, for the facts job's cost -------------------------

/** A wire event (rrweb events, `nav`, `vital`) as a chunk holds it. */
export type FactWireEvent = Record<string, unknown> & { t: number; type: string };

const element = (
  id: number,
  tagName: string,
  attributes: Record<string, string>,
  childNodes: unknown[] = [],
) => ({
  type: 2,
  id,
  tagName,
  attributes,
  childNodes,
});
const masked = (id: number) => ({ type: 3, id, textContent: '*****' });

/** A page's `main` element with its clickable nodes (ids from `nextId`). */
function mainOf(route: string, nextId: () => number): { node: unknown; clickable: number[]; id: number } {
  const name = route === '/' ? 'home' : route.slice(1).replaceAll('/:', '-').replaceAll('/', '-');
  const clickable: number[] = [];
  const leaf = (tagName: string, attributes: Record<string, string>) => {
    const id = nextId();
    clickable.push(id);
    return element(id, tagName, attributes, [masked(nextId())]);
  };
  const id = nextId();
  const cards = Array.from({ length: 6 }, () => leaf('a', { class: 'card' }));
  const node = element(id, 'main', { class: name }, [
    element(nextId(), 'section', { class: 'hero' }, [leaf('a', { class: 'cta' })]),
    element(nextId(), 'div', { class: 'content' }, [leaf('button', { class: 'primary' }), ...cards]),
    element(nextId(), 'aside', {}, [leaf('a', { class: 'link' })]),
  ]);
  return { node, clickable, id };
}

/**
 * One session's events as the SDK writes them: ~3 page views over `ROUTES` (page loads: a `nav`
 * with `load: true`, an rrweb Meta and full snapshot, then FCP, TTFB and LCP, and CLS and INP
 * as the page unloads; the app's own navigations: a `nav` and a mutation replacing `main`),
 * clicks answered by a mutation, some dead ones and now and then a rage burst, scrolls with the
 * document's height, and mouse moves.
 */
export function factSessionEvents(random: () => number, start: number): FactWireEvent[] {
  const events: FactWireEvent[] = [];
  const rrweb = (t: number, data: Record<string, unknown>) => events.push({ t, type: 'rrweb', data });
  const incremental = (t: number, data: Record<string, unknown>) => rrweb(t, { type: 3, data });
  const vital = (t: number, name: 'LCP' | 'INP' | 'CLS' | 'FCP' | 'TTFB', value: number) =>
    events.push({ t, type: 'vital', name, value, rating: rateVital(name, value) });
  const [width, height] = pick(random, VIEWPORTS.desktop as Weighted<[number, number]>);
  let nodeId = 1;
  const nextId = () => ++nodeId;
  let t = start;
  let mainId = 0;
  let bodyId = 0;
  let footerId = 0;
  let clickable: number[] = [];
  const views = Math.min(6, 1 + Math.floor(-2.2 * Math.log(1 - random())));
  let route = random() < 0.3 ? '/' : pick(random, ROUTE_WEIGHTS);
  for (let view = 0; view < views; view += 1) {
    if (view > 0) route = pick(random, ROUTE_WEIGHTS);
    const url = `https://shop.example.com${route.replaceAll(':id', String(1 + Math.floor(random() * 900))).replaceAll(':slug', 'getting-started')}`;
    const pageHeight = Math.round(Math.max(height, logNormal(random, 2_400, 0.5)));
    const load = view === 0 || random() < 0.5;
    if (load) {
      nodeId = 1;
      events.push({ t, type: 'nav', url, load: true });
      rrweb(t + 1, { type: 4, data: { href: url, width, height, dh: pageHeight } });
      const header = element(nextId(), 'header', {}, [
        element(nextId(), 'nav', {}, [
          element(nextId(), 'a', { class: 'logo' }),
          element(nextId(), 'a', { class: 'nav-link' }),
          element(nextId(), 'a', { class: 'nav-link' }),
          element(nextId(), 'button', { id: 'menu' }),
        ]),
      ]);
      const main = mainOf(route, nextId);
      footerId = nextId();
      const footer = element(footerId, 'footer', {}, [element(nextId(), 'a', { class: 'legal' })]);
      bodyId = nextId();
      mainId = main.id;
      clickable = main.clickable;
      const snapshot = {
        type: 0,
        id: 1,
        childNodes: [
          element(nextId(), 'html', {}, [element(bodyId, 'body', {}, [header, main.node, footer])]),
        ],
      };
      rrweb(t + 2, { type: 2, data: { node: snapshot, initialOffset: { top: 0, left: 0 } } });
      vital(t + 300, 'TTFB', Math.round(logNormal(random, 420, 0.6)));
      vital(t + 900, 'FCP', Math.round(logNormal(random, 1_300, 0.45)));
      vital(t + 2_000, 'LCP', Math.round(logNormal(random, 2_100, 0.5)));
    } else {
      events.push({ t, type: 'nav', url });
      const main = mainOf(route, nextId);
      incremental(t + 30, {
        source: 0,
        removes: [{ parentId: bodyId, id: mainId }],
        adds: [{ parentId: bodyId, nextId: footerId, node: main.node }],
        texts: [],
        attributes: [],
      });
      mainId = main.id;
      clickable = main.clickable;
    }
    // ~20 s on the page: mouse moves every 500 ms, a scroll every 2 s, clicks now and then.
    const duration = Math.round(Math.min(60_000, logNormal(random, 20_000, 0.6)));
    let scrollY = 0;
    const end = t + duration;
    for (let at = t + 2_500; at < end - 500; at += 500) {
      incremental(at, {
        source: 1,
        positions: [
          { x: Math.floor(random() * width), y: Math.floor(random() * height), id: mainId, timeOffset: -200 },
          { x: Math.floor(random() * width), y: Math.floor(random() * height), id: mainId, timeOffset: 0 },
        ],
      });
      if ((at - t) % 2_000 === 500 && scrollY + height < pageHeight) {
        scrollY = Math.min(pageHeight - height, scrollY + Math.floor(random() * 600));
        incremental(at + 100, { source: 3, id: 1, x: 0, y: scrollY, dh: pageHeight });
      }
      if (random() < 0.08) {
        const target = clickable[Math.floor(random() ** 2 * clickable.length)] as number;
        const x = Math.floor(random() * width);
        const y = Math.floor(random() * height);
        const click = (when: number, dx = 0) =>
          incremental(when, {
            source: 2,
            type: 2,
            id: target,
            x: x + dx,
            y,
            ox: Math.round(random() * 100) / 100,
            oy: Math.round(random() * 100) / 100,
          });
        click(at + 200);
        const roll = random();
        if (roll < 0.05) {
          click(at + 400, 3);
          click(at + 600, -2);
          click(at + 800, 1);
        } else if (roll < 0.85) {
          incremental(at + 300, {
            source: 0,
            adds: [],
            removes: [],
            texts: [],
            attributes: [{ id: target, attributes: { class: 'busy' } }],
          });
        }
      }
    }
    if (load) {
      vital(end - 10, 'CLS', Math.round(logNormal(random, 0.03, 1.2) * 1000) / 1000);
      vital(end - 10, 'INP', Math.round(logNormal(random, 160, 0.6)));
    }
    t = end;
  }
  return events;
}

/** A session's events cut into chunks of `chunkMs` of recording (the SDK's flush interval). */
export function cutEvents(events: readonly FactWireEvent[], chunkMs: number): FactWireEvent[][] {
  const start = (events[0] as FactWireEvent).t;
  const chunks: FactWireEvent[][] = [];
  for (const event of events) {
    const index = Math.floor((event.t - start) / chunkMs);
    while (chunks.length <= index) chunks.push([]);
    (chunks[index] as FactWireEvent[]).push(event);
  }
  return chunks.filter((chunk) => chunk.length > 0);
}
