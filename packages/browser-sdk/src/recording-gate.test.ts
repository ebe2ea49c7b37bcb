import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createRecordingGate, type RecordingGateOptions } from './recording-gate.ts';
import type { WireEvent } from './session-writer.ts';

const START = 1_763_700_000_000;

/** An rrweb event: a checkout (Meta, type 4) or an incremental one (type 3). */
const rrweb = (t: number, checkout = false): WireEvent => ({
  t,
  type: 'rrweb',
  data: { type: checkout ? 4 : 3 },
});

function gate(options: Partial<RecordingGateOptions> = {}) {
  const written: WireEvent[] = [];
  const created = createRecordingGate({
    mode: 'always',
    triggers: [],
    monitorTriggers: [],
    startedAt: START,
    write: (event) => written.push(event),
    ...options,
  });
  return { gate: created, written };
}

/** A recording with a checkout every 10 s and an incremental event every second. */
function feed(push: (event: WireEvent) => void, fromS: number, toS: number) {
  for (let s = fromS; s < toS; s += 1) push(rrweb(START + s * 1000, s % 10 === 0));
}

describe('recording gate', () => {
  it('writes everything at once in `always` mode', () => {
    const { gate: always, written } = gate();
    feed(always.push, 0, 25);
    always.push({ t: START + 25_000, type: 'error', message: 'x', source: 'manual' });
    expect(written).toHaveLength(26);
    expect(written.some((event) => event.type === 'trigger')).toBe(false);
  });

  it('stores nothing of a conditional session until a trigger, then the pre-roll from a checkout', () => {
    let remembered = false;
    const { gate: conditional, written } = gate({
      mode: 'conditional',
      triggers: ['webrtc:freeze'],
      onTriggered: () => {
        remembered = true;
      },
    });
    feed(conditional.push, 0, 35);
    conditional.push({ t: START + 35_000, type: 'custom', name: 'not_a_trigger' });
    conditional.fire('webrtc:one_way_media', START + 35_500);
    expect(written).toEqual([]);
    expect(conditional.state(START + 35_500)).toBe('waiting');

    conditional.fire('webrtc:freeze', START + 36_000);
    // Held: the previous checkout segment (20..29 s) and the current one (30..35 s).
    expect(written[0]).toEqual(rrweb(START + 20_000, true));
    expect(written.filter((event) => event.type === 'rrweb').map((event) => event.t)).toEqual(
      Array.from({ length: 15 }, (_, index) => START + (20 + index) * 1000),
    );
    expect(written.at(-1)).toEqual({ t: START + 36_000, type: 'trigger', name: 'webrtc:freeze' });
    expect(remembered).toBe(true);
    // Then recorded as it comes; later triggers write nothing more.
    conditional.push(rrweb(START + 37_000));
    conditional.fire('webrtc:freeze', START + 38_000);
    expect(written.at(-1)).toEqual(rrweb(START + 37_000));
    expect(conditional.state(START + 38_000)).toBe('recording');
  });

  it('keeps the lifecycle events of the segments a conditional session lets go, not their replay or samples', () => {
    const { gate: conditional, written } = gate({ mode: 'conditional', triggers: ['webrtc:one_way_media'] });
    conditional.push({ t: START, type: 'call.event', name: 'pc_created', pc: 'pc_1' });
    conditional.push({ t: START + 500, type: 'call.sample', pc: 'pc_1' });
    feed(conditional.push, 1, 35);
    conditional.fire('webrtc:one_way_media', START + 35_000);
    expect(written.slice(0, 2).map((event) => event.type)).toEqual(['call.event', 'rrweb']);
    expect(written[1]).toEqual(rrweb(START + 20_000, true));
    expect(written.some((event) => event.type === 'call.sample')).toBe(false);
  });

  it('fires on errors and on `track()` names', () => {
    const onError = gate({ mode: 'conditional', triggers: ['error'] });
    feed(onError.gate.push, 0, 3);
    onError.gate.push({ t: START + 3000, type: 'error', message: 'boom', source: 'onerror' });
    expect(onError.written.map((event) => event.type)).toEqual([
      'rrweb',
      'rrweb',
      'rrweb',
      'error',
      'trigger',
    ]);

    const onTrack = gate({ mode: 'conditional', triggers: ['checkout_failed'] });
    onTrack.gate.push({ t: START, type: 'custom', name: 'checkout_failed' });
    expect(onTrack.written).toEqual([
      { t: START, type: 'custom', name: 'checkout_failed' },
      { t: START, type: 'trigger', name: 'checkout_failed' },
    ]);
  });

  it('continues a session triggered on an earlier page', () => {
    const { gate: continued, written } = gate({ mode: 'conditional', triggers: ['error'], triggered: true });
    continued.push(rrweb(START));
    expect(written).toEqual([rrweb(START)]);
  });

  it('records bursts in monitor mode: a gap for what was let go, the pre-roll, the trigger, the post-roll', () => {
    const { gate: monitor, written } = gate({
      monitorModeAfterMinutes: 1,
      monitorTriggers: ['webrtc:freeze'],
      postRollSec: 5,
    });
    feed(monitor.push, 0, 60);
    expect(written).toHaveLength(60);
    feed(monitor.push, 60, 95);
    monitor.push({ t: START + 95_000, type: 'call.sample', pc: 'pc_1' });
    // Replay events are held; the rest goes on.
    expect(written).toHaveLength(61);
    monitor.fire('webrtc:freeze', START + 95_500);
    const burst = written.slice(61);
    expect(burst[0]).toEqual({
      t: START + 60_000,
      type: 'gap',
      fromT: START + 60_000,
      toT: START + 80_000,
      reason: 'monitor',
    });
    expect(burst[1]).toEqual(rrweb(START + 80_000, true));
    expect(burst.at(-1)).toEqual({ t: START + 95_500, type: 'trigger', name: 'webrtc:freeze' });
    // Post-roll: recorded until 5 s after the trigger, then held again.
    feed(monitor.push, 96, 102);
    expect(written.slice(-5).map((event) => event.t)).toEqual(
      Array.from({ length: 5 }, (_, index) => START + (96 + index) * 1000),
    );
    expect(written.filter((event) => event.type === 'rrweb').at(-1)?.t).toBe(START + 100_000);
    expect(monitor.state(START + 101_000)).toBe('monitoring');
  });

  it('lets the older segment go past maxHeldEvents and asks for a checkout', () => {
    let checkouts = 0;
    const { gate: busy } = gate({
      mode: 'conditional',
      triggers: ['error'],
      maxHeldEvents: 10,
      onOverflow: () => {
        checkouts += 1;
      },
    });
    feed(busy.push, 0, 11);
    expect(checkouts).toBe(1);
  });

  it('never loses a replay event without declaring it: each is written or inside a gap (property)', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.oneof(
            fc.record({ kind: fc.constant('rrweb' as const), checkout: fc.boolean() }),
            fc.record({
              kind: fc.constant('fire' as const),
              name: fc.constantFrom('webrtc:freeze', 'other'),
            }),
            fc.record({ kind: fc.constant('sample' as const) }),
          ),
          { maxLength: 300 },
        ),
        fc.integer({ min: 0, max: 2 }),
        fc.integer({ min: 1, max: 20 }),
        (steps, monitorAfterMinutes, postRollSec) => {
          const { gate: monitor, written } = gate({
            monitorModeAfterMinutes: monitorAfterMinutes,
            monitorTriggers: ['webrtc:freeze'],
            postRollSec,
          });
          const pushed: WireEvent[] = [];
          steps.forEach((step, index) => {
            const t = START + index * 1000;
            if (step.kind === 'fire') monitor.fire(step.name, t);
            else {
              const event = step.kind === 'rrweb' ? rrweb(t, step.checkout) : { t, type: 'call.sample' };
              pushed.push(event);
              monitor.push(event);
            }
          });
          // Whatever is still held at the end is in memory, not lost; flush it with a trigger.
          monitor.fire('webrtc:freeze', START + steps.length * 1000);
          const gaps = written.filter((event) => event.type === 'gap') as Array<
            WireEvent & { fromT: number; toT: number }
          >;
          for (const event of pushed) {
            const kept = written.includes(event);
            const declared = gaps.some((gap) => event.t >= gap.fromT && event.t < gap.toT);
            expect(kept || (event.type === 'rrweb' && declared)).toBe(true);
          }
          // A released pre-roll that follows a gap starts at a checkout.
          written.forEach((event, index) => {
            if (event.type === 'gap') expect(startsAtCheckout(written[index + 1])).toBe(true);
          });
        },
      ),
    );
  });
});

function startsAtCheckout(event: WireEvent | undefined): boolean {
  return event?.type === 'rrweb' && (event.data as { type: number }).type === 4;
}
