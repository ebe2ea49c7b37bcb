// Rage clicks and dead clicks of one page view, from its ordered events (servers/api/README.md,
// Insights). The detectors work on `Interaction`s; `toInteractions` maps the SDK's wire events
// (rrweb events and `nav` events) to them.

/** A page view's events as the click detectors see them, in time order. */
export type Interaction =
  | { t: number; kind: 'click'; x: number; y: number; nodeId: number }
  /** The DOM changed: an rrweb mutation, or an input's value or checked state. */
  | { t: number; kind: 'mutation' }
  /** The page changed: a `nav` event, or rrweb's meta or full snapshot of a (re)loaded page. */
  | { t: number; kind: 'navigation' };

type Click = Extract<Interaction, { kind: 'click' }>;

/** The thresholds of the issue: 3 clicks within 1 s within 30 px; no response within 1 s. */
const CLICK_LIMITS = {
  rageClickCount: 3,
  rageWindowMs: 1000,
  rageRadiusPx: 30,
  deadWindowMs: 1000,
} as const;

/** One burst of clicks that is a rage click: where and on what it started, and how many. */
interface RageClick {
  /** The first click's time. */
  t: number;
  /** The last click's time. */
  endT: number;
  count: number;
  x: number;
  y: number;
  nodeId: number;
}

/** A click that nothing answered. */
interface DeadClick {
  t: number;
  x: number;
  y: number;
  nodeId: number;
}

/**
 * The rage clicks among `interactions`. Clicks form bursts: a click joins the current burst when
 * it comes at most 1 s after the burst's previous click and lies within 30 px (Euclidean) of the
 * burst's first click; otherwise it starts a new burst. A burst is one rage click when 3 of its
 * clicks fall within 1 s; it is reported once, with all its clicks counted, at its first click's
 * position and target node.
 *
 * @example
 * ```ts
 * const click = (t: number) => ({ t, kind: 'click', x: 10, y: 10, nodeId: 7 }) as const;
 * findRageClicks([click(0), click(200), click(400)]); // [{ t: 0, endT: 400, count: 3, x: 10, y: 10, nodeId: 7 }]
 * ```
 */
export function findRageClicks(interactions: readonly Interaction[]): RageClick[] {
  const rageClicks: RageClick[] = [];
  let burst: Click[] = [];
  const close = () => {
    if (isRage(burst)) {
      const first = burst[0] as Click;
      const last = burst[burst.length - 1] as Click;
      rageClicks.push({
        t: first.t,
        endT: last.t,
        count: burst.length,
        x: first.x,
        y: first.y,
        nodeId: first.nodeId,
      });
    }
  };
  for (const interaction of interactions) {
    if (interaction.kind !== 'click') continue;
    const first = burst[0];
    const previous = burst[burst.length - 1];
    if (
      first !== undefined &&
      previous !== undefined &&
      interaction.t - previous.t <= CLICK_LIMITS.rageWindowMs &&
      Math.hypot(interaction.x - first.x, interaction.y - first.y) <= CLICK_LIMITS.rageRadiusPx
    ) {
      burst.push(interaction);
    } else {
      close();
      burst = [interaction];
    }
  }
  close();
  return rageClicks;
}

function isRage(burst: readonly Click[]): boolean {
  const span = CLICK_LIMITS.rageClickCount - 1;
  for (let index = span; index < burst.length; index += 1) {
    const last = burst[index] as Click;
    const first = burst[index - span] as Click;
    if (last.t - first.t <= CLICK_LIMITS.rageWindowMs) return true;
  }
  return false;
}

/**
 * The dead clicks among `interactions`: clicks followed by no mutation and no navigation at or
 * after the click's time and at most 1 s later. A click whose second is not fully observed
 * (`until`, by default the last interaction's time, is less than 1 s after it) is not judged:
 * what answered it may be in the next chunk.
 *
 * @example
 * ```ts
 * findDeadClicks([{ t: 0, kind: 'click', x: 1, y: 2, nodeId: 3 }], { until: 5000 }); // [{ t: 0, x: 1, y: 2, nodeId: 3 }]
 * ```
 */
export function findDeadClicks(
  interactions: readonly Interaction[],
  options: { until?: number } = {},
): DeadClick[] {
  const until = options.until ?? interactions[interactions.length - 1]?.t ?? 0;
  const deadClicks: DeadClick[] = [];
  for (const [index, interaction] of interactions.entries()) {
    if (interaction.kind !== 'click') continue;
    const deadline = interaction.t + CLICK_LIMITS.deadWindowMs;
    if (deadline > until) continue;
    let answered = false;
    for (let next = index + 1; next < interactions.length; next += 1) {
      const later = interactions[next] as Interaction;
      if (later.t > deadline) break;
      if (later.kind !== 'click' && later.t >= interaction.t) {
        answered = true;
        break;
      }
    }
    if (!answered) {
      deadClicks.push({ t: interaction.t, x: interaction.x, y: interaction.y, nodeId: interaction.nodeId });
    }
  }
  return deadClicks;
}

/** rrweb's event types, incremental sources and mouse interactions that the detectors read. */
const RRWEB = {
  fullSnapshot: 2,
  incrementalSnapshot: 3,
  meta: 4,
  mutationSource: 0,
  mouseInteractionSource: 2,
  inputSource: 5,
  click: 2,
} as const;

/** A wire event as stored in a session's chunks; only `t`, `type` and `data` are read. */
interface WireEvent {
  t: number;
  type: string;
  data?: unknown;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null;
}

/**
 * The `Interaction`s of a page view's wire events, in their order. `rrweb` events become: a
 * click (incremental snapshot, source MouseInteraction, type Click, with numeric `id`, `x`, `y`);
 * a mutation (source Mutation, and source Input: a typed value or a toggled checkbox is the page
 * answering); a navigation (a meta or full snapshot event: a page load, or rrweb's periodic
 * checkout). `nav` events are navigations. Everything else (scrolls, mouse moves, other mouse
 * interactions, errors, vitals, custom events) is left out: scrolling is not an answer to a click.
 *
 * @example
 * ```ts
 * toInteractions([{ t: 5, type: 'rrweb', data: { type: 3, data: { source: 2, type: 2, id: 9, x: 4, y: 8 } } }]);
 * // [{ t: 5, kind: 'click', x: 4, y: 8, nodeId: 9 }]
 * ```
 */
export function toInteractions(events: readonly WireEvent[]): Interaction[] {
  const interactions: Interaction[] = [];
  for (const event of events) {
    if (event.type === 'nav') {
      interactions.push({ t: event.t, kind: 'navigation' });
      continue;
    }
    if (event.type !== 'rrweb' || !isRecord(event.data)) continue;
    const rrweb = event.data;
    if (rrweb.type === RRWEB.meta || rrweb.type === RRWEB.fullSnapshot) {
      interactions.push({ t: event.t, kind: 'navigation' });
      continue;
    }
    if (rrweb.type !== RRWEB.incrementalSnapshot || !isRecord(rrweb.data)) continue;
    const data = rrweb.data;
    if (data.source === RRWEB.mutationSource || data.source === RRWEB.inputSource) {
      interactions.push({ t: event.t, kind: 'mutation' });
    } else if (
      data.source === RRWEB.mouseInteractionSource &&
      data.type === RRWEB.click &&
      typeof data.id === 'number' &&
      typeof data.x === 'number' &&
      typeof data.y === 'number'
    ) {
      interactions.push({ t: event.t, kind: 'click', x: data.x, y: data.y, nodeId: data.id });
    }
  }
  return interactions;
}
