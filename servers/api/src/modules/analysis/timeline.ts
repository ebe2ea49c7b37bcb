// A session's wire events, read once in order, as the items a transcript and a reproduction are
// made of: pages, clicks (named by role and accessible name), typing (never its value in what a
// transcript shows), errors, failed requests, custom events, vitals, call events and the SDK's gaps.
// Pure and incremental: `push` each chunk's events as they are read, `finish` once.

import {
  findDeadClicks,
  findRageClicks,
  type Interaction,
  normalizeRoute,
  toInteractions,
} from '../insights/index.ts';
import {
  describeElement,
  type ElementDescription,
  isMaskedText,
  NAMING_CONTENT,
  playwrightLocator,
} from './elements.ts';
import { createPageMirror } from './page-mirror.ts';

/** What was typed into a field, as a reproduction may use it (a transcript never shows it). */
export type TypedValue =
  /** The SDK masked it (the default): a reproduction types a placeholder. */
  | { kind: 'masked' }
  /** Recorded as typed (an unmasked field). */
  | { kind: 'text'; text: string }
  | { kind: 'checked'; checked: boolean };

/** The call events a transcript tells (others, such as signaling states, are left out). */
const TOLD_CALL_EVENTS = new Set([
  'pc_created',
  'connection_state',
  'ice_candidate_error',
  'candidate_pair_change',
  'ice_restart',
  'media_acquired',
  'media_error',
  'track_unmuted',
  'device_change',
  'pc_closed',
]);

interface ItemBase {
  /** Where it is in the session: `<seq>.<index>` of its event (its evidence id). */
  id: string;
  t: number;
}

/** One thing that happened, as read from the session's events. */
export type TimelineItem = ItemBase &
  (
    | { kind: 'page'; url: string; route: string; load: boolean }
    | { kind: 'click'; element: ElementDescription | null; locator?: string | null; dead?: boolean }
    | {
        kind: 'rage_click';
        element: ElementDescription | null;
        locator?: string | null;
        count: number;
        endT: number;
      }
    | { kind: 'input'; element: ElementDescription | null; locator?: string | null; value: TypedValue }
    | { kind: 'error'; name: string; message?: string; source?: string; stack?: string }
    | {
        kind: 'request';
        initiator?: string;
        method: string;
        url: string;
        status?: number;
        failure?: string;
        durationMs?: number;
      }
    | { kind: 'custom'; name: string; props?: Record<string, unknown>; severity?: string }
    | { kind: 'vital'; name: string; value: number; rating?: string }
    | { kind: 'identify'; userId?: string }
    | { kind: 'trigger'; name: string }
    | { kind: 'gap'; toT: number; reason: string }
    | { kind: 'call'; pc?: string; name: string; fields: Record<string, unknown> }
  );

/** rrweb's event types and incremental sources that the timeline reads. */
const RRWEB = {
  fullSnapshot: 2,
  incremental: 3,
  meta: 4,
  mutation: 0,
  mouseInteraction: 2,
  input: 5,
  click: 2,
} as const;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function text(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

function finite(value: unknown): value is number {
  return typeof value === 'number' && Number.isFinite(value);
}

function pathOf(url: string): string {
  try {
    return new URL(url, 'http://session.invalid').pathname;
  } catch {
    return url;
  }
}

/** A request the transcript tells: it failed (no answer, or a 4xx/5xx status). */
function failed(event: Record<string, unknown>): boolean {
  return event.failure !== undefined || !finite(event.status) || (event.status as number) >= 400;
}

/** Builds a session's timeline from its events, chunk after chunk. */
export interface TimelineBuilder {
  /** The events of the chunk `seq`, in their order. */
  push(seq: number, events: readonly unknown[]): void;
  /** The items, in time order (stable: the events' order among equal times). */
  finish(): TimelineItem[];
}

/**
 * A timeline builder. `routePatterns` are the project's route patterns (insights' routes);
 * `startUrl` is the session's first URL, used when its events name none.
 *
 * @example
 * ```ts
 * const builder = createTimelineBuilder({ routePatterns: [] });
 * builder.push(0, chunk.events);
 * const items = builder.finish();
 * ```
 */
export function createTimelineBuilder(options: {
  routePatterns?: readonly string[];
  /** Give clicks and typing a Playwright locator (what a reproduction needs; it costs a walk of the page per action). */
  locators?: boolean;
}): TimelineBuilder {
  const routePatterns = options.routePatterns ?? [];
  const items: TimelineItem[] = [];
  /** The DOM, for naming what clicks and typing act on (built only when one is to be named). */
  const dom = createPageMirror(NAMING_CONTENT);
  const describe = (nodeId: number): ElementDescription | null => {
    const current = dom.current();
    return current === null ? null : describeElement(current, nodeId);
  };
  const locate = (element: ElementDescription | null): { locator?: string | null } => {
    if (options.locators !== true) return {};
    const current = dom.current();
    return { locator: element === null || current === null ? null : playwrightLocator(current, element) };
  };
  /** The current page's clicks and interactions, for rage and dead clicks. */
  let pageClicks: Array<Extract<TimelineItem, { kind: 'click' }> & { nodeId: number }> = [];
  let interactions: Interaction[] = [];
  let lastPath: string | undefined;
  let lastInput:
    | (Extract<TimelineItem, { kind: 'input' }> & { nodeId: number; eventNodeId: number })
    | undefined;
  const removed = new Set<TimelineItem>();

  /** The time of the latest event read: how far the current page was observed. */
  let observedUntil: number | undefined;
  const closePage = () => {
    const until = observedUntil;
    for (const rage of findRageClicks(interactions)) {
      const burst = pageClicks.filter((click) => click.t >= rage.t && click.t <= rage.endT);
      const first = burst[0];
      if (first === undefined) continue;
      for (const click of burst) removed.add(click);
      items.push({
        kind: 'rage_click',
        id: first.id,
        t: first.t,
        element: first.element,
        ...(first.locator === undefined ? {} : { locator: first.locator }),
        count: rage.count,
        endT: rage.endT,
      });
    }
    if (until !== undefined) {
      const dead = new Set(
        findDeadClicks(interactions, { until }).map((click) => `${click.t}:${click.nodeId}`),
      );
      for (const click of pageClicks) if (dead.has(`${click.t}:${click.nodeId}`)) click.dead = true;
    }
    pageClicks = [];
    interactions = [];
  };

  const page = (id: string, t: number, url: string, load: boolean) => {
    if (load) closePage();
    lastPath = pathOf(url);
    lastInput = undefined;
    items.push({ kind: 'page', id, t, url, route: normalizeRoute(url, routePatterns), load });
  };

  const readRrweb = (id: string, t: number, rrweb: Record<string, unknown>) => {
    const data = isRecord(rrweb.data) ? rrweb.data : {};
    if (rrweb.type === RRWEB.meta) {
      const href = text(data.href);
      if (href !== undefined && pathOf(href) !== lastPath) page(id, t, href, true);
      return;
    }
    if (rrweb.type === RRWEB.fullSnapshot) {
      dom.snapshot(data.node);
      return;
    }
    if (rrweb.type !== RRWEB.incremental) return;
    if (data.source === RRWEB.mutation) {
      dom.mutate(data);
      return;
    }
    if (data.source === RRWEB.mouseInteraction && data.type === RRWEB.click && finite(data.id)) {
      const element = describe(data.id);
      const click = { kind: 'click' as const, id, t, element, ...locate(element), nodeId: data.id };
      pageClicks.push(click);
      items.push(click);
      lastInput = undefined;
      return;
    }
    if (data.source === RRWEB.input && finite(data.id)) {
      // Typing is an input event per keystroke: the element is described once, at its first.
      const continued = lastInput !== undefined && lastInput.eventNodeId === data.id;
      const element = continued ? (lastInput?.element ?? null) : describe(data.id);
      const typed = text(data.text);
      const value: TypedValue =
        typeof data.isChecked === 'boolean' &&
        (element?.fieldType === 'checkbox' || element?.fieldType === 'radio')
          ? { kind: 'checked', checked: data.isChecked }
          : typed === undefined || typed === '' || isMaskedText(typed) || element?.fieldType === 'password'
            ? { kind: 'masked' }
            : { kind: 'text', text: typed };
      const nodeId = element?.nodeId ?? data.id;
      if (lastInput !== undefined && lastInput.nodeId === nodeId && value.kind !== 'checked') {
        lastInput.value = value;
        return;
      }
      const input = {
        kind: 'input' as const,
        id,
        t,
        element,
        ...locate(element),
        value,
        nodeId,
        eventNodeId: data.id,
      };
      items.push(input);
      lastInput = input;
    }
  };

  const readEvent = (id: string, event: Record<string, unknown>) => {
    const t = event.t as number;
    switch (event.type) {
      case 'rrweb':
        if (isRecord(event.data)) readRrweb(id, t, event.data);
        return;
      case 'nav': {
        const url = text(event.url);
        if (url === undefined) return;
        // A load's nav comes with the page's meta event: the page is told once.
        if (event.load === true || pathOf(url) !== lastPath) page(id, t, url, event.load === true);
        return;
      }
      case 'error':
        items.push({
          kind: 'error',
          id,
          t,
          name: text(event.name) ?? 'Error',
          ...(text(event.message) === undefined ? {} : { message: text(event.message) }),
          ...(text(event.source) === undefined ? {} : { source: text(event.source) }),
          ...(text(event.stack) === undefined ? {} : { stack: text(event.stack) }),
        });
        return;
      case 'request':
        if (!failed(event)) return;
        items.push({
          kind: 'request',
          id,
          t,
          method: text(event.method) ?? 'GET',
          url: text(event.url) ?? '',
          ...(text(event.initiator) === undefined ? {} : { initiator: text(event.initiator) }),
          ...(finite(event.status) ? { status: event.status } : {}),
          ...(text(event.failure) === undefined ? {} : { failure: text(event.failure) }),
          ...(finite(event.durationMs) ? { durationMs: event.durationMs } : {}),
        });
        return;
      case 'custom':
        items.push({
          kind: 'custom',
          id,
          t,
          name: text(event.name) ?? 'event',
          ...(isRecord(event.props) ? { props: event.props } : {}),
          ...(text(event.severity) === undefined ? {} : { severity: text(event.severity) }),
        });
        return;
      case 'vital':
        if (!finite(event.value)) return;
        items.push({
          kind: 'vital',
          id,
          t,
          name: text(event.name) ?? 'vital',
          value: event.value,
          ...(text(event.rating) === undefined ? {} : { rating: text(event.rating) }),
        });
        return;
      case 'identify': {
        const user = isRecord(event.user) ? event.user : {};
        items.push({
          kind: 'identify',
          id,
          t,
          ...(text(user.id) === undefined ? {} : { userId: text(user.id) }),
        });
        return;
      }
      case 'trigger':
        items.push({ kind: 'trigger', id, t, name: text(event.name) ?? 'trigger' });
        return;
      case 'gap':
        if (finite(event.fromT) && finite(event.toT))
          items.push({
            kind: 'gap',
            id,
            t: event.fromT,
            toT: event.toT,
            reason: text(event.reason) ?? 'unknown',
          });
        return;
      case 'call.event': {
        const name = text(event.name);
        if (name === undefined || !TOLD_CALL_EVENTS.has(name)) return;
        if (name === 'track_unmuted' && !(finite(event.freezeMs) && event.freezeMs > 0)) return;
        const { t: _t, type: _type, pc, name: _name, ...fields } = event;
        items.push({
          kind: 'call',
          id,
          t,
          name,
          fields,
          ...(text(pc) === undefined ? {} : { pc: text(pc) }),
        });
        return;
      }
      default:
        return;
    }
  };

  return {
    push(seq, events) {
      for (const [index, event] of events.entries()) {
        if (!isRecord(event) || !finite(event.t) || typeof event.type !== 'string') continue;
        const id = `${seq}.${index}`;
        readEvent(id, event);
        observedUntil = Math.max(observedUntil ?? event.t, event.t);
        if (event.type === 'rrweb' || event.type === 'nav') {
          interactions.push(...toInteractions([{ t: event.t, type: event.type, data: event.data }]));
        }
      }
    },
    finish() {
      closePage();
      const kept = items.filter((item) => !removed.has(item));
      // Stable sort by time: the events' order among equal times (and rage clicks at their first click).
      const ordered = kept.map((item, order) => ({ item, order }));
      ordered.sort((a, b) => a.item.t - b.item.t || a.order - b.order);
      return ordered.map(({ item }) => {
        if ('nodeId' in item) {
          const {
            nodeId: _nodeId,
            eventNodeId: _eventNodeId,
            ...rest
          } = item as TimelineItem & {
            nodeId: number;
            eventNodeId?: number;
          };
          return rest as TimelineItem;
        }
        return item;
      });
    },
  };
}
