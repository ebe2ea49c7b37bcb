// A long browser session as the browser SDK records and sends it, for bench/analysis.bench.ts: a
// person working in a web console (an app shell of a few thousand nodes around route pages:
// dashboard, projects table, project page with tabs, settings form, reports table, a call page,
// profile) for `minutes`, with a WebRTC call in the middle. Deterministic for a seed.
//
// What it holds, as the SDK would send it (packages/browser-sdk: rrweb with every text masked as
// `*` per non-space character except in `svc-unmask` elements, typed values masked, a chunk
// sealed every `flushSec`, a checkout (rrweb Meta + full snapshot with new node ids) once an
// incremental event comes `checkoutSec` after the last full snapshot):
// - page loads (`nav` with `load: true`, Meta, full snapshot, TTFB/FCP/LCP; CLS and INP as the
//   page goes), the app's own navigations (`nav` and a mutation replacing `main`);
// - mouse moves (source 1, every 500 ms while the mouse moves, 50 ms apart), scrolls (source 3),
//   clicks (mouse down, up and click: source 2), typing (source 5, a masked value per keystroke;
//   unmasked fields as typed; checkboxes), mutations answering them (modals, toasts, rows
//   removed, table pages and tab panels replaced, attribute and text changes), dead clicks and
//   rage clicks on a failing save;
// - `request` events (page data, saves, polling; some failing: 4xx/5xx, network failures, a few
//   minutes of a backend incident), `error` events (an export that throws, rejections during the
//   incident, console errors), `custom` events, `identify`, `gap` events for a hidden tab;
// - a call of `callMinutes` in the middle: test/call-timelines.ts' `callTimeline` with a sample
//   every 5 s (4 tracks), a stretch of packet loss and low resolution, while the call page gets
//   mute toggles and chat messages.

import { callTimeline, sessionMeta, type WireItem } from '../test/call-timelines.ts';
import { createRandom, pick, type Weighted } from './random.ts';

const ORIGIN = 'https://app.example.com';

/** A node of rrweb's serialized tree: the generator's page is exactly what it sends. */
interface PageNode {
  type: number;
  id: number;
  tagName?: string;
  attributes?: Record<string, string>;
  childNodes?: PageNode[];
  textContent?: string;
  name?: string;
  publicId?: string;
  systemId?: string;
}

const element = (
  tagName: string,
  attributes: Record<string, string> = {},
  childNodes: PageNode[] = [],
): PageNode => ({ type: 2, id: 0, tagName, attributes, childNodes });
const text = (textContent: string): PageNode => ({ type: 3, id: 0, textContent });
const icon = (path = 'M4 6h16M4 12h16M4 18h16') =>
  element('svg', { viewBox: '0 0 24 24', width: '16', height: '16', 'aria-hidden': 'true' }, [
    element('path', { d: path }),
  ]);

/** The SDK's text masking: every non-space character becomes `*`. */
const mask = (value: string) => value.replace(/\S/g, '*');

const WORDS = [
  'orders',
  'revenue',
  'monthly',
  'active',
  'review',
  'pending',
  'shipping',
  'customer',
  'invoice',
  'draft',
  'archive',
  'north',
  'team',
  'update',
  'weekly',
  'growth',
  'backend',
  'release',
  'budget',
  'summary',
  'region',
  'status',
  'account',
  'billing',
  'analytics',
  'support',
  'mobile',
  'checkout',
  'export',
  'onboarding',
];

/** What a click on a node does. */
type Action =
  | { kind: 'navigate'; path: string }
  | { kind: 'edit'; row: PageNode }
  | { kind: 'delete'; row: PageNode }
  | { kind: 'check'; row: PageNode }
  | { kind: 'tab'; index: number }
  | { kind: 'page'; page: number }
  | { kind: 'refresh' }
  | { kind: 'export' }
  | { kind: 'save' }
  | { kind: 'type'; fieldType: string; unmasked: boolean }
  | { kind: 'search' }
  | { kind: 'menu' }
  | { kind: 'new' }
  | { kind: 'toggle' }
  | { kind: 'send' }
  | { kind: 'dead' };

/** A node a person acts on: what they click (maybe a node inside it) and what it does. */
interface Target {
  node: PageNode;
  /** The node the click lands on (an icon inside a button); default `node`. */
  inner?: PageNode;
  action: Action;
  weight: number;
}

/** A route page: its `main` and what can be acted on in it. */
interface RoutePage {
  main: PageNode;
  targets: Target[];
  /** The table body whose rows can be removed, edited, checked or paged. */
  tbody?: PageNode;
  /** The tab panel the tabs replace. */
  panel?: PageNode;
  tabs?: PageNode[];
  /** The call page's chat list. */
  messages?: PageNode;
}

export interface LongSessionOptions {
  sessionId: string;
  start: number;
  minutes: number;
  seed?: number;
  /** A checkout every this many seconds (the SDK's `recording.checkoutIntervalSec`, default 30). */
  checkoutSec?: number;
  /** A chunk sealed every this many seconds (the SDK's `flushIntervalSec`, default 5). */
  flushSec?: number;
  /** The call's length, in the middle of the session (0: none). Default a quarter of `minutes`. */
  callMinutes?: number;
}

/** The session's chunks (JSON, as the SDK sends them before deflating) and what they hold. */
export interface LongSession {
  sessionId: string;
  start: number;
  end: number;
  chunks: Buffer[];
  events: number;
  /** JSON bytes of every chunk. */
  bytes: number;
  /** Nodes of the full snapshots (smallest, largest) and how many there are. */
  snapshotNodes: { min: number; max: number; count: number };
  counts: {
    pageLoads: number;
    navigations: number;
    clicks: number;
    keystrokes: number;
    mutations: number;
    mouseMoves: number;
    scrolls: number;
    requests: number;
    failedRequests: number;
    errors: number;
    custom: number;
    vitals: number;
    callSamples: number;
  };
}

/**
 * Generates the session.
 *
 * @example
 * ```ts
 * const session = createLongSession({ sessionId: newSessionId(), start: Date.now() - 7_200_000, minutes: 120 });
 * for (const chunk of session.chunks) await postChunk(app, projectKey, chunk);
 * ```
 */
export function createLongSession(options: LongSessionOptions): LongSession {
  const random = createRandom(options.seed ?? 24);
  const checkoutMs = (options.checkoutSec ?? 30) * 1_000;
  const flushMs = (options.flushSec ?? 5) * 1_000;
  const start = options.start;
  const end = start + options.minutes * 60_000;
  const callMinutes = options.callMinutes ?? Math.round(options.minutes / 4);
  const callStart = start + Math.round((options.minutes - callMinutes) / 2) * 60_000;
  const callEnd = callStart + callMinutes * 60_000;

  const between = (low: number, high: number) => low + Math.floor(random() * (high - low + 1));
  const chance = (probability: number) => random() < probability;
  const oneOf = <T>(values: readonly T[]): T => values[Math.floor(random() * values.length)] as T;
  const words = (count: number) => Array.from({ length: count }, () => oneOf(WORDS)).join(' ');
  const logNormal = (median: number, sigma: number) =>
    median * Math.exp(sigma * Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random()));

  const counts: LongSession['counts'] = {
    pageLoads: 0,
    navigations: 0,
    clicks: 0,
    keystrokes: 0,
    mutations: 0,
    mouseMoves: 0,
    scrolls: 0,
    requests: 0,
    failedRequests: 0,
    errors: 0,
    custom: 0,
    vitals: 0,
    callSamples: 0,
  };
  const snapshotNodes = { min: Number.POSITIVE_INFINITY, max: 0, count: 0 };

  // --- Output: events as JSON text, with their time (sorted and cut into chunks at the end).
  const output: Array<{ t: number; json: string }> = [];
  const emit = (event: Record<string, unknown> & { t: number }) =>
    output.push({ t: event.t, json: JSON.stringify(event) });

  // --- The page: rrweb ids in document order, reset on page loads, new ones at each checkout.
  let lastId = 0;
  const adopt = (root: PageNode, unmasked: boolean) => {
    const stack: Array<{ node: PageNode; unmasked: boolean }> = [{ node: root, unmasked }];
    while (stack.length > 0) {
      const { node, unmasked: keep } = stack.pop() as { node: PageNode; unmasked: boolean };
      lastId += 1;
      node.id = lastId;
      if (node.type === 3 && !keep) node.textContent = mask(node.textContent ?? '');
      const own = keep || (node.attributes?.class ?? '').split(' ').includes('svc-unmask');
      const children = node.childNodes ?? [];
      for (let index = children.length - 1; index >= 0; index -= 1)
        stack.push({ node: children[index] as PageNode, unmasked: own });
    }
  };
  const renumber = (root: PageNode): number => {
    let nodes = 0;
    const stack = [root];
    while (stack.length > 0) {
      const node = stack.pop() as PageNode;
      lastId += 1;
      nodes += 1;
      node.id = lastId;
      const children = node.childNodes ?? [];
      for (let index = children.length - 1; index >= 0; index -= 1) stack.push(children[index] as PageNode);
    }
    return nodes;
  };

  let url = `${ORIGIN}/dashboard`;
  let documentNode: PageNode = element('html');
  let layout: PageNode = element('div');
  let body: PageNode = element('body');
  let toasts: PageNode = element('div');
  let shellTargets: Target[] = [];
  let page: RoutePage = { main: element('main'), targets: [] };
  const removedRows = new Set<PageNode>();
  let lastFullSnapshot = start;
  let lastRrweb = start;
  let pageLoadedAt = start;
  let route = '/dashboard';

  const rrweb = (t: number, type: number, data: Record<string, unknown>) => {
    if (t < lastRrweb) throw new Error(`rrweb events out of order: ${t} < ${lastRrweb}`);
    lastRrweb = t;
    emit({ t, type: 'rrweb', data: { type, data, timestamp: t } });
  };
  const fullSnapshot = (t: number) => {
    const nodes = renumber(documentNode);
    snapshotNodes.min = Math.min(snapshotNodes.min, nodes);
    snapshotNodes.max = Math.max(snapshotNodes.max, nodes);
    snapshotNodes.count += 1;
    rrweb(t, 4, { href: url, width: 1440, height: 900, dh: 2_400 });
    rrweb(t, 2, { node: documentNode, initialOffset: { top: 0, left: 0 } });
    lastFullSnapshot = t;
  };
  /** An incremental event; rrweb takes a checkout after one that comes `checkoutMs` after the last full snapshot. */
  const incremental = (t: number, data: Record<string, unknown>) => {
    rrweb(t, 3, data);
    if (t - lastFullSnapshot > checkoutMs) fullSnapshot(t);
  };
  const mutation = (t: number, change: Record<string, unknown>) => {
    counts.mutations += 1;
    incremental(t, { source: 0, texts: [], attributes: [], removes: [], adds: [], ...change });
  };
  const parentOf = (root: PageNode, child: PageNode): PageNode | undefined => {
    const stack = [root];
    while (stack.length > 0) {
      const node = stack.pop() as PageNode;
      if (node.childNodes?.includes(child)) return node;
      for (const next of node.childNodes ?? []) stack.push(next);
    }
    return undefined;
  };
  /** Adds `node` under `parent` (last) and says so in a mutation. */
  const add = (t: number, parent: PageNode, node: PageNode, unmasked = false) => {
    adopt(node, unmasked);
    parent.childNodes?.push(node);
    mutation(t, { adds: [{ parentId: parent.id, nextId: null, node }] });
  };
  const remove = (t: number, parent: PageNode, node: PageNode) => {
    parent.childNodes = (parent.childNodes ?? []).filter((child) => child !== node);
    mutation(t, { removes: [{ parentId: parent.id, id: node.id }] });
  };
  /** New texts for text nodes (each `text(node)`), in the page and in a mutation. */
  const changeTexts = (t: number, nodes: readonly PageNode[], text: (node: PageNode) => string) => {
    const texts = nodes.map((node) => {
      node.textContent = text(node);
      return { id: node.id, value: node.textContent };
    });
    mutation(t, { texts });
  };
  /** New attribute values for elements, in the page and in a mutation. */
  const changeAttributes = (t: number, changes: ReadonlyArray<[PageNode, Record<string, string>]>) => {
    for (const [node, attributes] of changes) node.attributes = { ...node.attributes, ...attributes };
    mutation(t, { attributes: changes.map(([node, attributes]) => ({ id: node.id, attributes })) });
  };
  /** The text nodes under `root`. */
  const textsOf = (root: PageNode): PageNode[] => {
    const texts: PageNode[] = [];
    const stack = [root];
    while (stack.length > 0) {
      const node = stack.pop() as PageNode;
      if (node.type === 3) texts.push(node);
      for (const child of node.childNodes ?? []) stack.push(child);
    }
    return texts;
  };

  // --- Network, errors, events.
  let incidentFrom = start + Math.round(options.minutes * 0.2) * 60_000;
  if (incidentFrom >= callStart && incidentFrom < callEnd) incidentFrom = callEnd + 60_000;
  const incidentTo = incidentFrom + 4 * 60_000;
  const request = (
    t: number,
    method: string,
    path: string,
    options: { fail?: number; status?: number } = {},
  ) => {
    counts.requests += 1;
    const inIncident = t >= incidentFrom && t < incidentTo && path.startsWith('/api/');
    const durationMs = Math.round(logNormal(method === 'GET' ? 90 : 160, 0.6));
    const roll = random();
    let outcome: { status?: number; failure?: string } = { status: options.status ?? 200 };
    if (inIncident && chance(0.8)) outcome = { status: 503 };
    else if (roll < (options.fail ?? 0.02)) outcome = { status: oneOf([500, 502, 404, 422]) };
    else if (roll < (options.fail ?? 0.02) + 0.004) outcome = { failure: oneOf(['network', 'timeout']) };
    if (outcome.failure !== undefined || (outcome.status ?? 0) >= 400) counts.failedRequests += 1;
    emit({
      t,
      type: 'request',
      initiator: chance(0.85) ? 'fetch' : 'xhr',
      method,
      url: `${ORIGIN}${path}`,
      ...outcome,
      durationMs: outcome.failure === 'timeout' ? 30_000 : durationMs,
      ...(method === 'GET' ? {} : { requestBytes: between(80, 2_000) }),
      ...(outcome.status === undefined ? {} : { responseBytes: between(200, 40_000) }),
    });
    return { ok: outcome.status !== undefined && outcome.status < 400, status: outcome.status, durationMs };
  };
  const error = (t: number, name: string, message: string, source: string, frames: string[]) => {
    counts.errors += 1;
    emit({
      t,
      type: 'error',
      name,
      message,
      source,
      stack: [
        `${name}: ${message}`,
        ...frames.map(
          (frame, index) => `    at ${frame} (${ORIGIN}/assets/index-8f3a2c.js:1:${1_200 + index * 377})`,
        ),
      ].join('\n'),
    });
  };
  const custom = (t: number, name: string, props?: Record<string, string | number | boolean>) => {
    counts.custom += 1;
    emit({ t, type: 'custom', name, ...(props === undefined ? {} : { props }) });
  };
  const vital = (t: number, name: string, value: number, good: number, poor: number) => {
    counts.vitals += 1;
    emit({
      t,
      type: 'vital',
      name,
      value,
      rating: value <= good ? 'good' : value <= poor ? 'needs-improvement' : 'poor',
    });
  };

  // --- Pages.
  const NAVIGATION: Array<[string, string]> = [
    ['Dashboard', '/dashboard'],
    ['Projects', '/projects'],
    ['Reports', '/reports'],
    ['Calls', '/calls/4812'],
    ['Team', '/team'],
    ['Settings', '/settings/profile'],
    ['Help', '/help'],
  ];
  const projectIds = Array.from({ length: 60 }, (_, index) => 101 + index * 7);

  const field = (
    id: string,
    label: string,
    input: PageNode,
    targets: Target[],
    fieldType: string,
    unmasked = false,
  ) => {
    targets.push({ node: input, action: { kind: 'type', fieldType, unmasked }, weight: 3 });
    return element('div', { class: 'field' }, [
      element('label', { for: id, class: 'svc-unmask' }, [text(label)]),
      input,
      element('p', { class: 'hint' }, [text(words(6))]),
    ]);
  };

  const tableRows = (tbody: PageNode, targets: Target[], rows: number, columns: number, actions: boolean) => {
    for (let row = 0; row < rows; row += 1) {
      const project = projectIds[row % projectIds.length] as number;
      const checkbox = element('input', { type: 'checkbox', 'aria-label': 'Select row' });
      const edit = element('button', { type: 'button', class: 'link svc-unmask' }, [text('Edit')]);
      const deleteIcon = icon('M6 7h12M9 7V4h6v3m-8 0 1 13h8l1-13');
      const remove = element('button', { type: 'button', class: 'icon', 'aria-label': 'Delete project' }, [
        deleteIcon,
      ]);
      const name = element('a', { href: `/projects/${project}`, class: 'name' }, [text(words(2))]);
      const tr = element('tr', { class: 'row' }, [
        element('td', {}, [checkbox]),
        element('td', {}, [name]),
        ...Array.from({ length: columns }, (_, column) =>
          element('td', { class: `c${column}` }, [
            column === 1
              ? element('span', { class: 'badge' }, [text(oneOf(['active', 'paused', 'archived']))])
              : text(column % 2 === 0 ? words(between(1, 3)) : String(between(1, 99_999))),
          ]),
        ),
        ...(actions ? [element('td', { class: 'actions' }, [edit, remove])] : []),
      ]);
      tbody.childNodes?.push(tr);
      targets.push({ node: name, action: { kind: 'navigate', path: `/projects/${project}` }, weight: 1 });
      targets.push({ node: checkbox, action: { kind: 'check', row: tr }, weight: 0.6 });
      if (actions) {
        targets.push({ node: edit, action: { kind: 'edit', row: tr }, weight: 0.5 });
        targets.push({
          node: remove,
          inner: deleteIcon.childNodes?.[0] as PageNode,
          action: { kind: 'delete', row: tr },
          weight: 0.12,
        });
      }
    }
  };
  const tableHead = (labels: readonly string[]) =>
    element('thead', { class: 'svc-unmask' }, [
      element(
        'tr',
        {},
        labels.map((label) => element('th', { scope: 'col' }, [text(label)])),
      ),
    ]);

  const routePage = (path: string): RoutePage => {
    const targets: Target[] = [];
    const heading = (title: string, unmasked = true) =>
      element('h1', unmasked ? { class: 'svc-unmask' } : {}, [text(title)]);
    if (path === '/dashboard') {
      const refresh = element('button', { type: 'button', class: 'svc-unmask' }, [text('Refresh')]);
      targets.push({ node: refresh, action: { kind: 'refresh' }, weight: 2 });
      const cards = Array.from({ length: 8 }, () => {
        const value = element('p', { class: 'value' }, [text(String(between(10, 99_999)))]);
        targets.push({ node: value, action: { kind: 'dead' }, weight: 0.4 });
        return element('div', { class: 'card' }, [
          element('h3', {}, [text(words(2))]),
          value,
          element('span', { class: 'delta' }, [text(`+${between(1, 40)}%`)]),
        ]);
      });
      const allReports = element('a', { href: '/reports', class: 'button svc-unmask' }, [
        text('All reports'),
      ]);
      targets.push({ node: allReports, action: { kind: 'navigate', path: '/reports' }, weight: 1 });
      const activity = Array.from({ length: 80 }, () =>
        element('li', { class: 'event' }, [
          element('span', { class: 'who' }, [text(words(2))]),
          element('span', { class: 'what' }, [text(words(5))]),
          element('time', {}, [text(`${between(1, 59)} min ago`)]),
        ]),
      );
      return {
        targets,
        main: element('main', { id: 'content', class: 'dashboard' }, [
          element('div', { class: 'page-head' }, [
            heading('Dashboard'),
            element('div', { class: 'actions' }, [refresh, allReports]),
          ]),
          element('section', { class: 'stats' }, cards),
          element('section', { class: 'chart', 'aria-label': 'Traffic' }, [
            element(
              'div',
              { class: 'bars' },
              Array.from({ length: 120 }, () =>
                element('div', { class: 'bar', style: `height:${between(5, 100)}%` }),
              ),
            ),
          ]),
          element('section', { class: 'activity' }, [
            element('h2', { class: 'svc-unmask' }, [text('Recent activity')]),
            element('ul', {}, activity),
          ]),
        ]),
      };
    }
    if (path === '/projects') {
      const newProject = element(
        'button',
        { type: 'button', class: 'primary svc-unmask', 'data-testid': 'new-project' },
        [text('New project')],
      );
      targets.push({ node: newProject, action: { kind: 'new' }, weight: 1 });
      const filter = element('input', {
        type: 'text',
        placeholder: 'Filter projects',
        'aria-label': 'Filter projects',
      });
      targets.push({ node: filter, action: { kind: 'type', fieldType: 'text', unmasked: false }, weight: 2 });
      const sort = element('select', { id: 'sort' }, [
        ...['Name', 'Created', 'Owner', 'Status'].map((label) =>
          element('option', { value: label }, [text(label)]),
        ),
      ]);
      targets.push({
        node: sort,
        action: { kind: 'type', fieldType: 'select', unmasked: true },
        weight: 0.5,
      });
      const tbody = element('tbody');
      tableRows(tbody, targets, 80, 5, true);
      const pages = Array.from({ length: 5 }, (_, index) =>
        element('button', { type: 'button', class: 'page' }, [text(String(index + 1))]),
      );
      pages.forEach((button, index) => {
        targets.push({ node: button, action: { kind: 'page', page: index + 1 }, weight: 0.6 });
      });
      return {
        targets,
        tbody,
        main: element('main', { id: 'content', class: 'projects' }, [
          element('div', { class: 'page-head' }, [heading('Projects'), newProject]),
          element('div', { class: 'toolbar' }, [
            filter,
            element('label', { for: 'sort', class: 'svc-unmask' }, [text('Sort by')]),
            sort,
            element('span', { class: 'selected' }, [text('0 selected')]),
          ]),
          element('table', { class: 'grid' }, [
            tableHead(['', 'Project', 'Owner', 'Status', 'Sessions', 'Region', 'Calls', '']),
            tbody,
          ]),
          element('nav', { class: 'pagination svc-unmask', 'aria-label': 'Pages' }, pages),
        ]),
      };
    }
    if (path.startsWith('/projects/') && path.endsWith('/settings')) {
      const inputs: Array<[string, string, PageNode, string, boolean]> = [
        ['f-name', 'Name', element('input', { id: 'f-name', type: 'text', name: 'name' }), 'text', false],
        [
          'f-slug',
          'Slug',
          element('input', { id: 'f-slug', type: 'text', class: 'svc-unmask' }),
          'text',
          true,
        ],
        ['f-description', 'Description', element('textarea', { id: 'f-description' }), 'textarea', false],
        ['f-website', 'Website', element('input', { id: 'f-website', type: 'url' }), 'url', false],
        ['f-owner', 'Owner e-mail', element('input', { id: 'f-owner', type: 'email' }), 'email', false],
        [
          'f-retention',
          'Retention (days)',
          element('input', { id: 'f-retention', type: 'number' }),
          'number',
          false,
        ],
        [
          'f-zone',
          'Time zone',
          element(
            'select',
            { id: 'f-zone' },
            ['UTC', 'Europe/Paris', 'America/New_York', 'Asia/Tokyo'].map((zone) =>
              element('option', { value: zone }, [text(zone)]),
            ),
          ),
          'select',
          false,
        ],
        ['f-origins', 'Allowed origins', element('textarea', { id: 'f-origins' }), 'textarea', false],
        ['f-sample', 'Sample rate', element('input', { id: 'f-sample', type: 'range' }), 'range', false],
        ['f-token', 'Ingest token', element('input', { id: 'f-token', type: 'password' }), 'password', false],
      ];
      const fields = inputs.map(([id, label, input, fieldType, unmasked]) =>
        field(id, label, input, targets, fieldType, unmasked),
      );
      const toggles = ['Notify on errors', 'Weekly digest', 'Record calls', 'Keep network requests'].map(
        (label) => {
          const box = element('input', { type: 'checkbox' });
          targets.push({
            node: box,
            action: { kind: 'type', fieldType: 'checkbox', unmasked: false },
            weight: 1,
          });
          return element('label', { class: 'toggle svc-unmask' }, [box, text(` ${label}`)]);
        },
      );
      const webhook = element('input', { type: 'url', 'aria-labelledby': 'webhook-label webhook-hint' });
      targets.push({ node: webhook, action: { kind: 'type', fieldType: 'url', unmasked: false }, weight: 1 });
      const save = element('button', { type: 'submit', class: 'primary svc-unmask' }, [text('Save changes')]);
      const cancel = element('button', { type: 'button', class: 'svc-unmask' }, [text('Cancel')]);
      targets.push({ node: save, action: { kind: 'save' }, weight: 2 });
      targets.push({
        node: cancel,
        action: { kind: 'navigate', path: path.replace('/settings', '') },
        weight: 0.5,
      });
      return {
        targets,
        main: element('main', { id: 'content', class: 'settings' }, [
          heading('Project settings'),
          element('form', { id: 'project-settings' }, [
            element('fieldset', {}, [
              element('legend', { class: 'svc-unmask' }, [text('General')]),
              ...fields,
            ]),
            element('fieldset', {}, [
              element('legend', { class: 'svc-unmask' }, [text('Notifications')]),
              ...toggles,
            ]),
            element('fieldset', {}, [
              element('span', { id: 'webhook-label', class: 'svc-unmask' }, [text('Slack webhook')]),
              webhook,
              element('span', { id: 'webhook-hint' }, [text(words(7))]),
            ]),
            element('div', { class: 'actions' }, [save, cancel]),
          ]),
          element('section', { class: 'danger' }, [
            element('h2', { class: 'svc-unmask' }, [text('Danger zone')]),
            element('p', {}, [text(words(12))]),
          ]),
        ]),
      };
    }
    if (path.startsWith('/projects/')) {
      const tabs = ['Overview', 'Sessions', 'Calls', 'Settings'].map((label, index) =>
        element('button', { role: 'tab', 'aria-selected': String(index === 0), class: 'tab' }, [text(label)]),
      );
      tabs.forEach((tab, index) => {
        targets.push({
          node: tab,
          action: index === 3 ? { kind: 'navigate', path: `${path}/settings` } : { kind: 'tab', index },
          weight: index === 3 ? 1 : 1.5,
        });
      });
      const tbody = element('tbody');
      tableRows(tbody, targets, 50, 4, false);
      const panel = element('section', { role: 'tabpanel', class: 'panel' }, [
        element(
          'dl',
          {},
          Array.from({ length: 12 }, () => [
            element('dt', {}, [text(words(1))]),
            element('dd', {}, [text(words(3))]),
          ]).flat(),
        ),
        element('table', { class: 'grid' }, [
          tableHead(['', 'Session', 'User', 'Status', 'Pages', 'Length']),
          tbody,
        ]),
      ]);
      return {
        targets,
        tbody,
        panel,
        tabs,
        main: element('main', { id: 'content', class: 'project' }, [
          heading(words(2), false),
          element('p', { class: 'sub' }, [text(words(9))]),
          element('div', { role: 'tablist', class: 'tabs svc-unmask' }, tabs),
          panel,
        ]),
      };
    }
    if (path === '/reports') {
      const from = element('input', { id: 'from', type: 'date' });
      const to = element('input', { id: 'to', type: 'date' });
      targets.push({ node: from, action: { kind: 'type', fieldType: 'date', unmasked: false }, weight: 0.5 });
      targets.push({ node: to, action: { kind: 'type', fieldType: 'date', unmasked: false }, weight: 0.5 });
      const apply = element('button', { type: 'button', class: 'svc-unmask' }, [text('Apply')]);
      const exportButton = element(
        'button',
        { type: 'button', class: 'svc-unmask', 'data-testid': 'export-csv' },
        [icon('M12 3v12m0 0-4-4m4 4 4-4M4 21h16'), text('Export CSV')],
      );
      targets.push({ node: apply, action: { kind: 'page', page: 1 }, weight: 1 });
      targets.push({ node: exportButton, action: { kind: 'export' }, weight: 1 });
      const tbody = element('tbody');
      for (let row = 0; row < 120; row += 1) {
        const cells = Array.from({ length: 9 }, (_, column) =>
          element('td', {}, [text(column === 0 ? words(2) : String(between(0, 250_000)))]),
        );
        targets.push({ node: cells[0] as PageNode, action: { kind: 'dead' }, weight: 0.02 });
        tbody.childNodes?.push(element('tr', {}, cells));
      }
      return {
        targets,
        tbody,
        main: element('main', { id: 'content', class: 'reports' }, [
          heading('Reports'),
          element('form', { class: 'filters' }, [
            element('label', { for: 'from', class: 'svc-unmask' }, [text('From')]),
            from,
            element('label', { for: 'to', class: 'svc-unmask' }, [text('To')]),
            to,
            apply,
            exportButton,
          ]),
          element('table', { class: 'report' }, [
            tableHead([
              'Account',
              'Sessions',
              'Users',
              'Errors',
              'Calls',
              'Minutes',
              'Quality',
              'Revenue',
              'Churn',
            ]),
            tbody,
          ]),
        ]),
      };
    }
    if (path.startsWith('/calls/')) {
      const toggle = (label: string, testId: string) => {
        const button = element(
          'button',
          { type: 'button', 'aria-label': label, 'aria-pressed': 'false', 'data-testid': testId },
          [icon()],
        );
        targets.push({
          node: button,
          inner: button.childNodes?.[0] as PageNode,
          action: { kind: 'toggle' },
          weight: 1,
        });
        return button;
      };
      const message = element('input', {
        type: 'text',
        placeholder: 'Write a message',
        'aria-label': 'Message',
      });
      const send = element('button', { type: 'submit', class: 'svc-unmask' }, [text('Send')]);
      targets.push({
        node: message,
        action: { kind: 'type', fieldType: 'text', unmasked: false },
        weight: 0.5,
      });
      targets.push({ node: send, action: { kind: 'send' }, weight: 0.5 });
      const messages = element(
        'ul',
        { class: 'messages' },
        Array.from({ length: 6 }, () => element('li', {}, [text(words(between(3, 12)))])),
      );
      return {
        targets,
        messages,
        main: element('main', { id: 'content', class: 'call' }, [
          heading(words(3), false),
          element(
            'div',
            { class: 'grid' },
            Array.from({ length: 4 }, () =>
              element('div', { class: 'tile' }, [
                element('video', { rr_width: '480px', rr_height: '270px', autoplay: '', playsinline: '' }),
                element('span', { class: 'name' }, [text(words(2))]),
              ]),
            ),
          ),
          element('div', { class: 'controls' }, [
            toggle('Mute', 'mute'),
            toggle('Stop camera', 'camera'),
            toggle('Share screen', 'share'),
            element('button', { type: 'button', class: 'danger svc-unmask', 'data-testid': 'leave' }, [
              text('Leave'),
            ]),
          ]),
          element('aside', { class: 'chat' }, [messages, element('form', {}, [message, send])]),
        ]),
      };
    }
    // Profile, team and help: a short form.
    const inputs = ['Full name', 'E-mail', 'Phone', 'Company', 'Job title', 'City'].map((label, index) => {
      const id = `p-${index}`;
      const fieldType = index === 1 ? 'email' : index === 2 ? 'tel' : 'text';
      return field(id, label, element('input', { id, type: fieldType }), targets, fieldType);
    });
    const save = element('button', { type: 'submit', class: 'primary svc-unmask' }, [text('Save profile')]);
    targets.push({ node: save, action: { kind: 'save' }, weight: 1 });
    return {
      targets,
      main: element('main', { id: 'content', class: 'profile' }, [
        heading(path === '/help' ? 'Help' : path === '/team' ? 'Team' : 'Profile'),
        element('form', {}, [...inputs, save]),
        element(
          'section',
          { class: 'about' },
          Array.from({ length: 30 }, () => element('p', {}, [text(words(between(8, 20)))])),
        ),
      ]),
    };
  };

  const buildDocument = (path: string) => {
    shellTargets = [];
    const navLinks = NAVIGATION.map(([label, target]) => {
      const link = element('a', { href: target, class: 'nav-link' }, [text(label)]);
      shellTargets.push({
        node: link,
        action: { kind: 'navigate', path: target },
        weight: target === '/calls/4812' ? 0 : 2,
      });
      return element('li', {}, [link]);
    });
    const search = element('input', {
      id: 'global-search',
      type: 'search',
      placeholder: 'Search projects, people, calls',
      autocomplete: 'off',
    });
    shellTargets.push({ node: search, action: { kind: 'search' }, weight: 1.5 });
    const avatar = element(
      'button',
      { type: 'button', class: 'avatar', 'data-testid': 'user-menu', 'aria-haspopup': 'menu' },
      [element('span', { class: 'initials' }, [text('JD')])],
    );
    shellTargets.push({ node: avatar, action: { kind: 'menu' }, weight: 0.4 });
    const notifications = element(
      'button',
      { type: 'button', class: 'icon', 'aria-label': 'Notifications' },
      [icon('M6 8a6 6 0 0 1 12 0c0 7 3 9 3 9H3s3-2 3-9'), element('span', { class: 'badge' }, [text('3')])],
    );
    shellTargets.push({ node: notifications, action: { kind: 'dead' }, weight: 0.3 });
    const sidebar = projectIds.map((project, index) => {
      const link = element('a', { href: `/projects/${project}`, class: 'item' }, [
        element('span', { class: 'dot' }),
        element('span', { class: 'name' }, [text(`Project ${WORDS[index % WORDS.length]} ${project}`)]),
      ]);
      shellTargets.push({
        node: link,
        action: { kind: 'navigate', path: `/projects/${project}` },
        weight: 0.05,
      });
      return element('li', {}, [link]);
    });
    const palette = Array.from({ length: 300 }, () =>
      element('li', { role: 'option', class: 'command' }, [
        element('span', { class: 'label' }, [text(words(3))]),
        element('kbd', {}, [text(`⌘${between(1, 9)}`)]),
      ]),
    );
    page = routePage(path);
    layout = element('div', { class: 'layout' }, [
      element('aside', { class: 'sidebar svc-unmask' }, [
        element('nav', { 'aria-label': 'Projects' }, [element('ul', {}, sidebar)]),
      ]),
      page.main,
    ]);
    toasts = element('div', { id: 'toasts', 'aria-live': 'polite' });
    body = element('body', { class: 'theme-light' }, [
      element('div', { id: 'app' }, [
        element('header', { class: 'topbar' }, [
          element('a', { href: '/dashboard', class: 'logo', 'aria-label': 'Home' }, [icon()]),
          element('nav', { class: 'primary svc-unmask', 'aria-label': 'Main' }, [
            element('ul', {}, navLinks),
          ]),
          element('div', { class: 'search' }, [
            element('label', { for: 'global-search', class: 'sr-only svc-unmask' }, [text('Search')]),
            search,
          ]),
          notifications,
          avatar,
        ]),
        layout,
        element('footer', {}, [
          element('p', {}, [text(`© 2026 ${words(3)}`)]),
          ...['Status', 'Privacy', 'Terms', 'Docs'].map((label) =>
            element('a', { href: `/${label.toLowerCase()}`, class: 'svc-unmask' }, [text(label)]),
          ),
        ]),
      ]),
      element('div', { class: 'palette', hidden: '' }, [element('ul', { role: 'listbox' }, palette)]),
      toasts,
    ]);
    documentNode = {
      type: 0,
      id: 0,
      childNodes: [
        { type: 1, id: 0, name: 'html', publicId: '', systemId: '' },
        element('html', { lang: 'en' }, [
          element('head', {}, [
            element('meta', { charset: 'utf-8' }),
            element('title', {}, [text('Acme Console')]),
            ...Array.from({ length: 5 }, (_, index) =>
              element('link', { rel: 'stylesheet', href: `/assets/chunk-${index}-3f2a9c.css` }),
            ),
          ]),
          body,
        ]),
      ],
    };
    lastId = 0;
    adopt(documentNode, false);
  };

  // --- What a person does.
  let t = start;
  let pageVitals = { cls: 0, inp: 0 };
  const loadPage = (path: string) => {
    if (t > start) {
      vital(t - 5, 'CLS', pageVitals.cls, 0.1, 0.25);
      vital(t - 5, 'INP', pageVitals.inp, 200, 500);
    }
    counts.pageLoads += 1;
    route = path;
    url = `${ORIGIN}${path}`;
    emit({ t, type: 'nav', url, load: true });
    buildDocument(path);
    fullSnapshot(t + 1);
    pageLoadedAt = t;
    const ttfb = Math.round(logNormal(380, 0.5));
    vital(t + ttfb, 'TTFB', ttfb, 800, 1_800);
    vital(t + 900, 'FCP', Math.round(logNormal(1_200, 0.4)), 1_800, 3_000);
    vital(t + 2_000, 'LCP', Math.round(logNormal(2_000, 0.45)), 2_500, 4_000);
    pageVitals = {
      cls: Math.round(logNormal(0.04, 1) * 1_000) / 1_000,
      inp: Math.round(logNormal(170, 0.5)),
    };
    request(t + 300, 'GET', `/api${path}`);
    request(t + 320, 'GET', '/api/me');
    t += 2_100;
  };
  const navigate = (path: string) => {
    counts.navigations += 1;
    route = path;
    url = `${ORIGIN}${path}`;
    emit({ t: t + 20, type: 'nav', url });
    const previous = page.main;
    page = routePage(path);
    adopt(page.main, false);
    layout.childNodes = (layout.childNodes ?? []).map((child) => (child === previous ? page.main : child));
    mutation(t + 40, {
      removes: [{ parentId: layout.id, id: previous.id }],
      adds: [{ parentId: layout.id, nextId: null, node: page.main }],
    });
    request(t + 30, 'GET', `/api${path}`);
    if (path.startsWith('/projects/') && chance(0.2))
      error(t + 200, 'Error', 'Warning: Each child in a list should have a unique "key" prop.', 'console', [
        'SessionRows',
        'renderWithHooks',
      ]);
    if (chance(0.5)) request(t + 35, 'GET', '/api/permissions');
    const loading = textsOf(page.main).slice(0, 12);
    t += 450;
    changeTexts(t, loading, (node) => node.textContent ?? '');
  };
  const mouseMove = (hover: PageNode) => {
    counts.mouseMoves += 1;
    const x = between(40, 1_400);
    const y = between(60, 880);
    incremental(t, {
      source: 1,
      positions: Array.from({ length: 10 }, (_, index) => ({
        x: x + index * between(-6, 6),
        y: y + index * between(-4, 4),
        id: hover.id,
        timeOffset: -450 + index * 50,
      })),
    });
  };
  const scroll = () => {
    let y = between(0, 1_200);
    for (let step = 0; step < between(3, 8); step += 1) {
      counts.scrolls += 1;
      y += between(40, 300);
      incremental(t, { source: 3, id: 1, x: 0, y, dh: 2_400 });
      t += 150;
    }
  };
  /** Mouse down, up and click on the target (at `position`, else somewhere). */
  const click = (target: Target, position?: { x: number; y: number }) => {
    counts.clicks += 1;
    const node = target.inner ?? target.node;
    const x = position?.x ?? between(40, 1_400);
    const y = position?.y ?? between(60, 880);
    incremental(t, { source: 2, type: 1, id: node.id, x, y, pointerType: 0 });
    t += between(60, 120);
    incremental(t, { source: 2, type: 0, id: node.id, x, y, pointerType: 0 });
    t += 2;
    incremental(t, {
      source: 2,
      type: 2,
      id: node.id,
      x,
      y,
      pointerType: 0,
      ox: Math.round(random() * 100) / 100,
      oy: Math.round(random() * 100) / 100,
    });
    return { x, y };
  };
  const typeInto = (input: PageNode, fieldType: string, unmasked: boolean) => {
    incremental(t, { source: 2, type: 5, id: input.id });
    if (fieldType === 'checkbox') {
      t += 30;
      counts.keystrokes += 1;
      incremental(t, { source: 5, text: 'on', isChecked: chance(0.5), userTriggered: true, id: input.id });
      return;
    }
    if (fieldType === 'select' || fieldType === 'date' || fieldType === 'range') {
      t += between(400, 1_500);
      counts.keystrokes += 1;
      incremental(t, {
        source: 5,
        text: unmasked ? 'Created' : '*******',
        isChecked: false,
        userTriggered: true,
        id: input.id,
      });
      return;
    }
    const value = fieldType === 'email' ? 'jane.doe@example.com' : words(between(1, 4));
    for (let length = 1; length <= value.length; length += 1) {
      t += between(90, 260);
      counts.keystrokes += 1;
      const typed = value.slice(0, length);
      incremental(t, {
        source: 5,
        text: unmasked ? typed : '*'.repeat(typed.length),
        isChecked: false,
        userTriggered: true,
        id: input.id,
      });
    }
    t += between(200, 800);
    incremental(t, { source: 2, type: 6, id: input.id });
  };
  const toast = (message: string, unmasked = false) => {
    const node = element('div', { role: 'status', class: 'toast' }, [text(message)]);
    add(t + 30, toasts, node, unmasked);
    return node;
  };
  const pendingToasts: Array<{ at: number; node: PageNode }> = [];
  const expireToasts = () => {
    while (pendingToasts.length > 0 && (pendingToasts[0]?.at ?? 0) <= t) {
      const { node } = pendingToasts.shift() as { at: number; node: PageNode };
      if (toasts.childNodes?.includes(node)) remove(t, toasts, node);
    }
  };
  const targets = () =>
    [...shellTargets, ...page.targets].filter(
      (target) =>
        target.weight > 0 &&
        !(
          (target.action.kind === 'edit' ||
            target.action.kind === 'delete' ||
            target.action.kind === 'check') &&
          removedRows.has(target.action.row)
        ),
    );

  /** A dialog of `fields` labelled inputs, added to the body; resolves with its Save button. */
  const dialog = (title: string, fields: number) => {
    const titleId = `dialog-${lastId}`;
    const inputs: PageNode[] = [];
    const rows = Array.from({ length: fields }, (_, index) => {
      const id = `d-${lastId}-${index}`;
      const input =
        index === 1
          ? element('input', { type: 'text', 'aria-labelledby': `${id}-label` })
          : element('input', { id, type: index === 2 ? 'email' : 'text' });
      inputs.push(input);
      return element('div', { class: 'field' }, [
        index === 1
          ? element('span', { id: `${id}-label`, class: 'svc-unmask' }, [text('Tags')])
          : element('label', { for: id, class: 'svc-unmask' }, [text(index === 2 ? 'Owner' : 'Name')]),
        input,
      ]);
    });
    const save = element('button', { type: 'submit', class: 'primary svc-unmask' }, [text('Save')]);
    const cancel = element('button', { type: 'button', class: 'svc-unmask' }, [text('Cancel')]);
    const node = element('div', { class: 'modal-backdrop' }, [
      element('div', { role: 'dialog', 'aria-modal': 'true', 'aria-labelledby': titleId, class: 'modal' }, [
        element('h2', { id: titleId, class: 'svc-unmask' }, [text(title)]),
        element('form', {}, [...rows, element('div', { class: 'actions' }, [cancel, save])]),
      ]),
    ]);
    add(t + 40, body, node);
    t += 600;
    return { node, inputs, save, cancel };
  };

  const act = (target: Target) => {
    const action = target.action;
    const at = click(target);
    const answered = () => t + between(30, 120);
    switch (action.kind) {
      case 'navigate':
        if (action.path === '/calls/4812') return;
        navigate(action.path);
        return;
      case 'dead':
        t += 1_500;
        return;
      case 'refresh': {
        request(answered(), 'GET', '/api/dashboard');
        t += 200;
        const values = textsOf(page.main).slice(0, 24);
        changeTexts(t, values, () => mask(String(between(10, 99_999))));
        return;
      }
      case 'check': {
        t += 20;
        counts.keystrokes += 1;
        incremental(t, {
          source: 5,
          text: 'on',
          isChecked: chance(0.7),
          userTriggered: true,
          id: target.node.id,
        });
        changeAttributes(answered(), [[action.row, { class: 'row selected' }]]);
        return;
      }
      case 'tab': {
        const tabs = page.tabs ?? [];
        changeAttributes(
          answered(),
          tabs.map((tab, index) => [tab, { 'aria-selected': String(index === action.index) }]),
        );
        request(
          t + 10,
          'GET',
          `/api/projects/${between(100, 999)}/${['overview', 'sessions', 'calls'][action.index]}`,
        );
        t += 300;
        const values = textsOf(page.panel ?? page.main).slice(0, 200);
        changeTexts(t, values, () => mask(words(between(1, 3))));
        return;
      }
      case 'page': {
        const outcome = request(answered(), 'GET', `/api${route.replace(/\/\d+/, '/:id')}/page`);
        t += 250;
        if (!outcome.ok) {
          pendingToasts.push({ at: t + 4_000, node: toast('Could not load the page', true) });
          return;
        }
        const values = textsOf(page.tbody ?? page.main);
        changeTexts(t, values, () => mask(words(between(1, 2))));
        return;
      }
      case 'export': {
        const outcome = request(answered(), 'GET', '/api/reports/export', { fail: 0.08 });
        t += outcome.durationMs + 50;
        if (!outcome.ok || chance(0.15)) {
          error(t, 'TypeError', "Cannot read properties of undefined (reading 'rows')", 'onerror', [
            'toCsv',
            'exportReport',
            'HTMLButtonElement.onClick',
          ]);
          pendingToasts.push({ at: t + 5_000, node: toast('Export failed', true) });
          return;
        }
        custom(t, 'report_exported', { format: 'csv', rows: 120 });
        pendingToasts.push({ at: t + 4_000, node: toast('Report exported', true) });
        return;
      }
      case 'type':
        typeInto(target.node, action.fieldType, action.unmasked);
        return;
      case 'search': {
        typeInto(target.node, 'search', false);
        request(t + 20, 'GET', '/api/search');
        const results = element(
          'ul',
          { role: 'listbox', class: 'results' },
          Array.from({ length: 8 }, () => element('li', { role: 'option' }, [text(words(3))])),
        );
        const parent = parentOf(body, target.node);
        if (parent === undefined) return;
        add(t + 200, parent, results);
        custom(t + 210, 'search', { results: 8 });
        t += between(1_500, 4_000);
        remove(t, parent, results);
        return;
      }
      case 'menu': {
        const items = ['Profile', 'Team', 'Billing', 'Keyboard shortcuts', 'Sign out'].map((label) =>
          element('li', { role: 'menuitem' }, [text(label)]),
        );
        const menu = element('ul', { role: 'menu', class: 'menu svc-unmask' }, items);
        const parent = parentOf(body, target.node);
        if (parent === undefined) return;
        add(answered(), parent, menu);
        t += between(800, 2_000);
        const choice = chance(0.6) ? 0 : 1;
        const item = { node: items[choice] as PageNode, action: { kind: 'dead' as const }, weight: 1 };
        click(item);
        remove(t + 20, parent, menu);
        t += 40;
        navigate(choice === 0 ? '/settings/profile' : '/team');
        return;
      }
      case 'new':
      case 'edit': {
        request(
          answered(),
          'GET',
          action.kind === 'edit' ? `/api/projects/${between(100, 999)}` : '/api/owners',
        );
        const modal = dialog(action.kind === 'edit' ? 'Edit project' : 'New project', 3);
        for (const [index, input] of modal.inputs.entries()) {
          if (index > 0 && chance(0.4)) continue;
          t += between(300, 1_200);
          click({ node: input, action: { kind: 'dead' }, weight: 1 });
          typeInto(input, index === 2 ? 'email' : 'text', false);
        }
        if (chance(0.1)) {
          t += 500;
          click({ node: modal.cancel, action: { kind: 'dead' }, weight: 1 });
          remove(t + 30, body, modal.node);
          t += 60;
          return;
        }
        t += between(300, 900);
        let saved = false;
        let position: { x: number; y: number } | undefined;
        for (let attempt = 0; attempt < 4 && !saved; attempt += 1) {
          position = click({ node: modal.save, action: { kind: 'save' }, weight: 1 }, position);
          const outcome = request(
            t + 5,
            action.kind === 'edit' ? 'PATCH' : 'POST',
            action.kind === 'edit'
              ? '/api/projects/:id'.replace(':id', String(between(100, 999)))
              : '/api/projects',
            { fail: attempt === 0 ? 0.12 : 0.5 },
          );
          if (outcome.ok) {
            saved = true;
            t += outcome.durationMs;
            remove(t, body, modal.node);
            custom(t + 5, action.kind === 'edit' ? 'project_saved' : 'project_created', { plan: 'pro' });
            pendingToasts.push({ at: t + 4_000, node: toast('Saved', true) });
            if (action.kind === 'edit') {
              const name = textsOf(action.row)[1];
              if (name !== undefined) changeTexts(t + 50, [name], () => mask(words(2)));
            }
            t += 100;
            return;
          }
          // The save fails: nothing on the page changes, so the person clicks again, quickly.
          if (attempt === 0)
            error(
              t + 200,
              'Error',
              `Request failed with status ${outcome.status ?? 0}`,
              'unhandledrejection',
              ['request', 'saveProject'],
            );
          t += between(150, 280);
        }
        t += 800;
        click({ node: modal.cancel, action: { kind: 'dead' }, weight: 1 });
        remove(t + 30, body, modal.node);
        t += 60;
        return;
      }
      case 'delete': {
        const confirm = element('button', { type: 'button', class: 'danger svc-unmask' }, [text('Delete')]);
        const node = element('div', { class: 'modal-backdrop' }, [
          element('div', { role: 'alertdialog', 'aria-modal': 'true', class: 'modal' }, [
            element('p', {}, [text(words(10))]),
            element('button', { type: 'button', class: 'svc-unmask' }, [text('Keep it')]),
            confirm,
          ]),
        ]);
        add(answered(), body, node);
        t += between(800, 2_000);
        click({ node: confirm, action: { kind: 'dead' }, weight: 1 });
        const outcome = request(t + 5, 'DELETE', `/api/projects/${between(100, 999)}`);
        t += outcome.durationMs;
        remove(t, body, node);
        if (outcome.ok && page.tbody?.childNodes?.includes(action.row)) {
          removedRows.add(action.row);
          remove(t + 10, page.tbody, action.row);
          custom(t + 15, 'project_deleted');
        }
        t += 50;
        return;
      }
      case 'save': {
        const outcome = request(answered(), 'PATCH', `/api${route.replace(/\/\d+/, '/:id')}`, { fail: 0.1 });
        t += outcome.durationMs;
        if (outcome.ok) {
          custom(t, 'settings_saved');
          pendingToasts.push({ at: t + 4_000, node: toast('Changes saved', true) });
        } else {
          pendingToasts.push({
            at: t + 6_000,
            node: toast(`Could not save: ${outcome.status ?? 'network'}`, true),
          });
          if (chance(0.5)) {
            // Clicks again and again on the button that does nothing now.
            for (let again = 0; again < 3; again += 1) {
              t += between(20, 120);
              click(target, { x: at.x + between(-5, 5), y: at.y + between(-5, 5) });
            }
          }
        }
        return;
      }
      case 'toggle': {
        const pressed = target.node.attributes?.['aria-pressed'] === 'true' ? 'false' : 'true';
        changeAttributes(answered(), [
          [target.node, { 'aria-pressed': pressed, class: pressed === 'true' ? 'on' : '' }],
        ]);
        return;
      }
      case 'send': {
        const messages = page.messages;
        if (messages === undefined) return;
        request(answered(), 'POST', '/api/calls/4812/messages');
        add(t + 150, messages, element('li', { class: 'mine' }, [text(words(between(3, 12)))]));
        t += 200;
        return;
      }
    }
  };

  // --- The session.
  emit({ t: start + 400, type: 'identify', user: { id: 'u_1042', email: 'jane.doe@example.com' } });
  loadPage('/dashboard');
  const hidden = [0.38, 0.86].map((fraction) => start + Math.round(options.minutes * fraction) * 60_000);
  let nextPoll = t + 30_000;
  let nextResizeError = t + between(5, 15) * 60_000;
  let reloads = 0;
  let inCall = false;
  let callDone = callMinutes === 0;
  let lastAction = t;

  while (t < end) {
    expireToasts();
    if (t >= nextResizeError) {
      // What many apps report every now and then, harmlessly.
      error(t, 'Error', 'ResizeObserver loop completed with undelivered notifications.', 'onerror', []);
      nextResizeError = t + between(8, 20) * 60_000;
    }
    if (t >= nextPoll) {
      request(t, 'GET', '/api/notifications');
      nextPoll = t + 30_000;
      if (t >= incidentFrom && t < incidentTo && chance(0.3))
        error(t + 40, 'Error', 'Request failed with status 503', 'unhandledrejection', [
          'request',
          'pollNotifications',
        ]);
    }
    if (!inCall && t >= (hidden[0] ?? Number.POSITIVE_INFINITY)) {
      hidden.shift();
      // The tab is hidden for a few minutes: the SDK records nothing and says so when it comes back.
      const toT = t + between(120, 300) * 1_000;
      emit({ t: toT, type: 'gap', fromT: t, toT, reason: 'hidden' });
      t = toT + 100;
      nextPoll = t;
      continue;
    }
    if (!callDone && !inCall && t >= callStart) {
      // The call: the person opens its link (a page load) and stays for `callMinutes`.
      loadPage('/calls/4812');
      custom(t, 'call_joined', { participants: 4 });
      // Two minutes of packet loss and low resolution a sixth of the way in.
      const samples = Math.max(1, Math.floor((callEnd - t) / 5_000) - 1);
      const impaired = (index: number) =>
        index >= Math.floor(samples / 6) && index < Math.floor(samples / 6) + 24;
      const call = callTimeline({
        pc: `pc_01J${Array.from({ length: 23 }, () => oneOf([...'0123456789ABCDEFGHJKMNPQRSTVWXYZ'])).join('')}`,
        start: t,
        samples,
        windowMs: 5_000,
        lossPct: (index) => (impaired(index) ? 9 : index % 97 === 0 ? 1.5 : 0),
        height: (index) => (impaired(index) ? 360 : 720),
      });
      for (const item of call.items as WireItem[]) {
        if (item.type === 'call.sample') counts.callSamples += 1;
        emit(item);
      }
      inCall = true;
      continue;
    }
    if (inCall && t >= callEnd) {
      const leave = page.main.childNodes?.[2]?.childNodes?.[3];
      if (leave !== undefined) click({ node: leave, action: { kind: 'dead' }, weight: 1 });
      custom(t + 10, 'call_left');
      t += 200;
      navigate('/dashboard');
      inCall = false;
      callDone = true;
      continue;
    }
    if (!inCall && chance(0.002) && reloads < 3 && t - pageLoadedAt > 10 * 60_000) {
      // A reload now and then (a new deploy, a stuck page).
      reloads += 1;
      loadPage(route);
      continue;
    }
    if (!inCall && t - lastAction > 5_000 && chance(0.003)) {
      // Reading: no mouse, no events but the poll.
      t += between(30, 120) * 1_000;
      lastAction = t;
      continue;
    }
    // Half a second of activity: the mouse moves, sometimes a scroll, sometimes an action.
    const choices = inCall ? page.targets : targets();
    if (chance(inCall ? 0.15 : 0.7)) mouseMove(oneOf(choices).node);
    if (!inCall && chance(0.04)) scroll();
    if (chance(inCall ? 0.004 : 0.06)) {
      const target = pick(random, choices.map((choice) => [choice, choice.weight]) as Weighted<Target>);
      t += 100;
      act(target);
      lastAction = t;
    }
    t += 500;
  }
  vital(end - 5, 'CLS', pageVitals.cls, 0.1, 0.25);
  vital(end - 5, 'INP', pageVitals.inp, 200, 500);

  // --- Chunks: what the SDK sealed every `flushMs` (an empty interval seals nothing).
  const sorted = output
    .map((event, order) => ({ ...event, order }))
    .filter((event) => event.t <= end + 60_000)
    .sort((a, b) => a.t - b.t || a.order - b.order);
  const chunks: Buffer[] = [];
  let bytes = 0;
  let window: string[] = [];
  let windowIndex = -1;
  const seal = () => {
    if (window.length === 0) return;
    const seq = chunks.length;
    const sentAt = start + (windowIndex + 1) * flushMs + 40;
    const meta =
      seq === 0
        ? `"meta":${JSON.stringify({ ...sessionMeta(start, { release: '3.4.0', userId: 'u_1042' }), url: `${ORIGIN}/dashboard` })},`
        : '';
    const json = `{"v":1,"sessionId":${JSON.stringify(options.sessionId)},"seq":${seq},"sentAt":${sentAt},${meta}"events":[${window.join(',')}]}`;
    const buffer = Buffer.from(json);
    bytes += buffer.byteLength;
    chunks.push(buffer);
    window = [];
  };
  for (const event of sorted) {
    const index = Math.floor((event.t - start) / flushMs);
    if (index !== windowIndex) {
      seal();
      windowIndex = index;
    }
    window.push(event.json);
  }
  seal();
  return {
    sessionId: options.sessionId,
    start,
    end,
    chunks,
    events: sorted.length,
    bytes,
    snapshotNodes,
    counts,
  };
}
