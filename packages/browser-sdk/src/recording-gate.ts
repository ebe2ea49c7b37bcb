import type { WireEvent } from './session-writer.ts';

/** How the session is kept (service-spec "SDK recording options used with call triggers"). */
export interface RecordingModeOptions {
  /** `always` (default) stores everything; `conditional` stores the session only once a trigger fires. */
  mode: 'always' | 'conditional';
  /** What starts storing a `conditional` session: `webrtc:<kind>`, `error`, or a `track()` name. */
  triggers: readonly string[];
  /** After this many minutes of session, only bursts around `monitorTriggers` are recorded. */
  monitorModeAfterMinutes?: number | null;
  /** What records a burst in monitor mode (same names as `triggers`). */
  monitorTriggers: readonly string[];
  /** How long a monitor-mode burst goes on after its trigger. Default 30 s. */
  postRollSec?: number;
}

export interface RecordingGateOptions extends RecordingModeOptions {
  /** When the session started (monitor mode counts from here). */
  startedAt: number;
  /** A `conditional` session that was triggered on an earlier page of the same session. */
  triggered?: boolean;
  /** Where kept events go (the session writer). */
  write(event: WireEvent): void;
  /** Called once when a `conditional` session is triggered (to remember it across reloads). */
  onTriggered?(): void;
  /** Called when the held events pass `maxHeldEvents`: the recorder should take a checkout. */
  onOverflow?(): void;
  /** Held events at most before the older segment is let go. Default 20 000. */
  maxHeldEvents?: number;
}

export interface RecordingGate {
  /** Every event of the session goes through here, in time order. */
  push(event: WireEvent): void;
  /** A named trigger (`webrtc:<kind>` findings; errors and `track()` names fire from `push`). */
  fire(name: string, t: number): void;
  /** `recording` (stored as it comes), `waiting` (conditional, nothing stored yet) or `monitoring`. */
  state(t: number): 'recording' | 'waiting' | 'monitoring';
}

/** rrweb's Meta event starts every full snapshot (checkout): a held segment starts there. */
const RRWEB_META = 4;

function startsSegment(event: WireEvent): boolean {
  return event.type === 'rrweb' && (event.data as { type?: unknown } | undefined)?.type === RRWEB_META;
}

/**
 * Decides which events are stored (service-spec recording modes). Held events are kept in
 * memory as checkout segments (each starts at a full snapshot): the current one and the one
 * before, so a trigger releases at least one checkout interval from before the problem (the
 * pre-roll) and always starting at a full snapshot a replay can begin from.
 *
 * - `always`: everything is written at once.
 * - `conditional`: everything is held until a trigger in `triggers` fires; the pre-roll, then a
 *   `trigger` event are written, and from then on the session is recorded as `always`. Of the
 *   segments let go before, the events other than replay and call samples are kept (a call's
 *   `pc_created`, errors, custom events) and written first.
 * - Monitor mode (after `monitorModeAfterMinutes`): replay events (`rrweb`) are held, everything
 *   else is written. A trigger in `monitorTriggers` writes a `gap` (`reason: "monitor"`) for what
 *   was let go, the pre-roll and a `trigger` event, and records `postRollSec` more before holding
 *   again.
 *
 * Errors fire the trigger `error`; `track()` events fire their name.
 *
 * @example
 * ```ts
 * const gate = createRecordingGate({ mode: 'conditional', triggers: ['webrtc:freeze'], monitorTriggers: [], startedAt: Date.now(), write: writer.push });
 * gate.push({ t: Date.now(), type: 'rrweb', data }); // held
 * gate.fire('webrtc:freeze', Date.now()); // pre-roll and a `trigger` event written
 * ```
 */
export function createRecordingGate(options: RecordingGateOptions): RecordingGate {
  const maxHeld = options.maxHeldEvents ?? 20_000;
  const postRollMs = (options.postRollSec ?? 30) * 1000;
  const monitorAfterMinutes = options.monitorModeAfterMinutes;
  const monitorFrom =
    monitorAfterMinutes === null || monitorAfterMinutes === undefined
      ? Number.POSITIVE_INFINITY
      : options.startedAt + monitorAfterMinutes * 60_000;
  let triggered = options.mode !== 'conditional' || options.triggered === true;
  let burstUntil = Number.NEGATIVE_INFINITY;
  /** Held checkout segments, oldest first: at most the previous and the current. */
  let segments: WireEvent[][] = [[]];
  let held = 0;
  /**
   * What a conditional session keeps of the segments it lets go: everything but replay and call
   * samples (call lifecycle, errors, custom events, navigation are few, and a call cannot be
   * understood without its `pc_created`), at most a quarter of `maxHeldEvents`.
   */
  let kept: WireEvent[] = [];
  /** What monitor mode let go and has not declared yet. */
  let gapFrom: number | undefined;
  let gapTo = 0;

  const state = (t: number) =>
    !triggered ? 'waiting' : t >= monitorFrom && t > burstUntil ? 'monitoring' : 'recording';

  const dropOldest = () => {
    const dropped = segments.shift() ?? [];
    held -= dropped.length;
    if (!triggered) {
      kept.push(...dropped.filter((event) => event.type !== 'rrweb' && event.type !== 'call.sample'));
      kept = kept.slice(-Math.floor(maxHeld / 4));
    }
    const first = dropped[0];
    // Only monitor mode declares what it let go: a conditional session starts at its pre-roll.
    if (first !== undefined && triggered) {
      gapFrom ??= first.t;
      gapTo = segments[0]?.[0]?.t ?? dropped[dropped.length - 1]?.t ?? first.t;
    }
    if (segments.length === 0) segments = [[]];
  };

  const hold = (event: WireEvent) => {
    if (startsSegment(event) && (segments[segments.length - 1]?.length ?? 0) > 0) {
      segments.push([]);
      if (segments.length > 2) dropOldest();
    }
    segments[segments.length - 1]?.push(event);
    held += 1;
    if (held > maxHeld) {
      if (segments.length > 1) dropOldest();
      options.onOverflow?.();
    }
  };

  const release = (t: number, name: string) => {
    if (gapFrom !== undefined) {
      options.write({ t: gapFrom, type: 'gap', fromT: gapFrom, toT: gapTo, reason: 'monitor' });
      gapFrom = undefined;
    }
    for (const segment of [kept, ...segments]) for (const event of segment) options.write(event);
    segments = [[]];
    kept = [];
    held = 0;
    options.write({ t, type: 'trigger', name });
  };

  const fire = (name: string, t: number) => {
    const now = state(t);
    if (now === 'waiting' && options.triggers.includes(name)) {
      triggered = true;
      options.onTriggered?.();
      release(t, name);
    } else if (t >= monitorFrom && options.monitorTriggers.includes(name)) {
      // A trigger inside a burst is written as it comes and extends the burst.
      if (now === 'monitoring') release(t, name);
      else if (now === 'recording') options.write({ t, type: 'trigger', name });
      else return;
      burstUntil = t + postRollMs;
    }
  };

  return {
    push(event) {
      const now = state(event.t);
      if (now === 'waiting' || (now === 'monitoring' && event.type === 'rrweb')) hold(event);
      else options.write(event);
      if (event.type === 'error') fire('error', event.t);
      else if (event.type === 'custom' && typeof event.name === 'string') fire(event.name, event.t);
    },
    fire,
    state,
  };
}
