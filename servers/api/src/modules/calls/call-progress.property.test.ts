import { detect, resolveThresholds } from '@svc/detectors';
import { type CallEvent, type CallSample, callEventSchema, callSampleSchema } from '@svc/protocol';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { referenceSummarizeCalls } from '../../../test/reference-summarize-calls.ts';
import {
  addItems,
  comesAfter,
  type PlacedCallItem,
  rescoreCall,
  type SeriesPiece,
  type SessionProgress,
  sortItems,
  startProgress,
  summarizeProgress,
} from './call-progress.ts';
import { joinSeries, type Series } from './series.ts';
import { summarizeCalls } from './summarize-calls.ts';

// Incremental processing against the full recompute as it was (test/reference-summarize-calls.ts):
// random multi-pc sessions cut into chunks that arrive in any order, with duplicates, processed
// after any arrival, the progress stored as JSON in between and recomputed from every item when
// a late chunk's items come before what was already added. The calls (facts and series) and the
// findings always equal those of all the items at once.

const T0 = Date.UTC(2026, 10, 20, 10, 0, 0);
const pcs = ['pc_01JD2S5V8Q8C4Y3K2W9T7N6MAA', 'pc_01JD2S5V8Q8C4Y3K2W9T7N6MBB'];
const shapes = [
  { id: 'trk_ai', kind: 'audio', dir: 'in', codec: 'audio/opus' },
  { id: 'trk_ao', kind: 'audio', dir: 'out', codec: 'audio/opus' },
  { id: 'trk_vi', kind: 'video', dir: 'in', codec: 'video/VP8' },
  { id: 'trk_vo', kind: 'video', dir: 'out', codec: 'video/VP9' },
] as const;
const maybe = <Value>(arbitrary: fc.Arbitrary<Value>) => fc.option(arbitrary, { nil: undefined, freq: 3 });
const defined = (record: Record<string, unknown>) =>
  Object.fromEntries(Object.entries(record).filter(([, value]) => value !== undefined));

/** Times on a coarse grid: many items share a `t`, across chunks too. */
const time = fc.integer({ min: 0, max: 90 }).map((step) => T0 + step * 1000);
const pc = fc.constantFrom(...pcs);

const track = fc
  .record({
    shape: fc.constantFrom(...shapes),
    lossPct: maybe(fc.constantFrom(0, 3, 8, 30)),
    rttMs: maybe(fc.constantFrom(40, 350)),
    concealmentPct: maybe(fc.constantFrom(0, 12)),
    freezes: maybe(fc.constantFrom(0, 1)),
    freezeMs: maybe(fc.constantFrom(0, 2500)),
    fps: maybe(fc.constantFrom(15, 30)),
    h: maybe(fc.constantFrom(180, 720)),
    withCodec: fc.boolean(),
    stalled: maybe(fc.boolean()),
  })
  .map(({ shape, withCodec, ...metrics }) =>
    defined({ ...shape, codec: withCodec ? shape.codec : undefined, ...metrics }),
  );

const sample = fc
  .record({
    t: time,
    pc,
    // Jittery windows: new longest windows make the score's sums be computed again.
    windowMs: fc.oneof(fc.constantFrom(1000, 5000), fc.integer({ min: 900, max: 5200 })),
    state: fc.constantFrom('connected', 'connected', 'connecting', 'failed'),
    localType: maybe(fc.constantFrom('host', 'relay')),
    relayed: maybe(fc.boolean()),
    network: maybe(fc.constantFrom('wifi', 'cellular')),
    tracks: fc.uniqueArray(track, { maxLength: 4, selector: (entry) => entry.id }),
  })
  .map(({ t, pc, windowMs, tracks, ...conn }) =>
    callSampleSchema.parse({ t, type: 'call.sample', pc, windowMs, conn: defined(conn), tracks }),
  );

const event = (name: string, fields: fc.Arbitrary<Record<string, unknown>> = fc.constant({})) =>
  fc
    .record({ t: time, pc, fields })
    .map(({ t, pc, fields }) => callEventSchema.parse({ t, type: 'call.event', pc, name, ...fields }));

const state = fc.constantFrom('new', 'connecting', 'connected', 'failed');
const callEvent = fc.oneof(
  event(
    'pc_created',
    fc.record({ state: fc.constant('new'), iceServers: fc.constant(1), tracked: fc.boolean() }),
  ),
  event('connection_state', fc.record({ state, prev: state, prevMs: fc.constant(10) })),
  event(
    'candidate_pair_change',
    fc
      .record({
        localType: fc.constantFrom('host', 'relay'),
        remoteType: fc.constantFrom('srflx', 'relay'),
        protocol: fc.constantFrom('udp', 'tcp'),
        relayed: fc.boolean(),
        network: maybe(fc.constantFrom('wifi', 'vpn')),
        initial: fc.boolean(),
      })
      .map(defined),
  ),
  event('ice_candidate_error', fc.record({ errorCode: fc.constantFrom(701, 401) })),
  event('ice_restart'),
  event(
    'track_unmuted',
    fc
      .record({ shape: fc.constantFrom(...shapes), freezeMs: maybe(fc.constantFrom(500, 2500)) })
      .map(({ shape, freezeMs }) => defined({ track: shape.id, kind: shape.kind, dir: shape.dir, freezeMs })),
  ),
  event('pc_closed', fc.record({ durationMs: fc.constantFrom(5000, 45_000) })),
  fc
    .record({
      t: time,
      error: fc.constantFrom(['NotAllowedError', 'permission_denied'], ['NotFoundError', 'device_not_found']),
    })
    .map(({ t, error: [errorName, errorClass] }) =>
      callEventSchema.parse({
        t,
        type: 'call.event',
        name: 'media_error',
        kind: 'audio',
        errorName,
        class: errorClass,
      }),
    ),
);

const items = fc.array(fc.oneof({ arbitrary: sample, weight: 3 }, { arbitrary: callEvent, weight: 2 }), {
  maxLength: 50,
});

/** The items cut into chunks of consecutive items (as an SDK sends them), each at its place. */
function chunksOf(list: ReadonlyArray<CallSample | CallEvent>, cuts: readonly number[]): PlacedCallItem[][] {
  const sorted = [...list].sort((a, b) => a.t - b.t);
  const ends = [...new Set(cuts.map((cut) => cut % (sorted.length + 1))), sorted.length].sort(
    (a, b) => a - b,
  );
  const chunks: PlacedCallItem[][] = [];
  let start = 0;
  for (const end of ends) {
    if (end <= start) continue;
    chunks.push(sorted.slice(start, end).map((item, index) => ({ seq: chunks.length, index, item })));
    start = end;
  }
  return chunks;
}

/** Stored state between jobs, as the server keeps it: JSON of the progress, series in pieces. */
interface Stored {
  progress: string;
  items: PlacedCallItem[];
  /** Per call and series (`pc/track`, track '' for the connection): the pieces in order. */
  series: Map<string, Series[]>;
}

/** One job: what the server's processing does with the chunks that arrived since the last one. */
function process(
  stored: Stored | undefined,
  fresh: PlacedCallItem[],
  thresholds: ReturnType<typeof resolveThresholds>,
) {
  const sortedFresh = sortItems([...fresh]);
  const series = new Map(stored?.series ?? []);
  let progress: SessionProgress;
  let items: PlacedCallItem[];
  let pieces: SeriesPiece[];
  const kept = stored === undefined ? undefined : (JSON.parse(stored.progress) as SessionProgress);
  if (kept !== undefined && stored !== undefined && comesAfter(kept, sortedFresh)) {
    progress = kept;
    items = [...stored.items, ...sortedFresh];
    const added = addItems(progress, sortedFresh);
    for (const pcId of added.rescore) {
      rescoreCall(
        progress,
        pcId,
        items.flatMap((entry) =>
          entry.item.type === 'call.sample' && entry.item.pc === pcId ? [entry.item] : [],
        ),
      );
    }
    pieces = added.pieces;
  } else {
    // No progress yet, or a late chunk: everything again, from every item.
    progress = startProgress(thresholds);
    items = sortItems([...(stored?.items ?? []), ...sortedFresh]);
    pieces = addItems(progress, items).pieces;
    series.clear();
  }
  for (const piece of pieces) {
    const key = `${piece.pc}/${piece.track ?? ''}`;
    const list = series.get(key) ?? [];
    // Pieces follow each other exactly.
    expect(list.reduce((sum, entry) => sum + (entry.t?.length ?? 0), 0)).toBe(piece.firstSample);
    series.set(key, [...list, piece.series]);
  }
  return { progress: JSON.stringify(progress), items, series } satisfies Stored;
}

describe('incremental call processing', () => {
  it('equals the full recompute, whatever the chunks, their order, duplicates and when jobs run', () => {
    fc.assert(
      fc.property(
        items,
        fc.array(fc.nat(), { maxLength: 8 }),
        fc.array(fc.nat(), { maxLength: 12 }),
        fc.array(fc.boolean(), { maxLength: 20 }),
        fc.constantFrom(undefined, { lossPct: 2, lossSustainMs: 2000, minObservedMs: 3000 }),
        fc.nat({ max: 200_000 }),
        (list, cuts, order, jobs, overrides, extra) => {
          const thresholds = resolveThresholds(overrides);
          const chunks = chunksOf(list, cuts);
          // Arrival: in order, but `order` delays some chunks by one to three places (late chunks)
          // and sends some twice (duplicates).
          const arrival = chunks.map((_, seq) => seq);
          for (const move of order) {
            const from = move % Math.max(1, arrival.length);
            const [moved] = arrival.splice(from, move % 5 === 0 ? 0 : 1);
            const to = Math.min(arrival.length, from + 1 + (Math.floor(move / 7) % 3));
            arrival.splice(to, 0, moved ?? (arrival[from] as number));
          }
          let stored: Stored | undefined;
          const consumed = new Set<number>();
          let waiting: number[] = [];
          arrival.forEach((seq, step) => {
            if (seq === undefined || consumed.has(seq) || waiting.includes(seq)) return;
            waiting.push(seq);
            if (jobs[step] === false) return;
            stored = process(
              stored,
              waiting.flatMap((chunk) => chunks[chunk] ?? []),
              thresholds,
            );
            for (const chunk of waiting) consumed.add(chunk);
            waiting = [];
          });
          const rest = chunks.map((_, seq) => seq).filter((seq) => !consumed.has(seq));
          stored = process(
            stored,
            rest.flatMap((chunk) => chunks[chunk] ?? []),
            thresholds,
          );

          const all = chunks.flat();
          const latest = Math.max(0, ...all.map((entry) => entry.item.t));
          const options = {
            aliveUntil: latest + (extra % 30_000),
            clientNow: latest + extra,
            inactivityMs: 120_000,
          };
          const expected = referenceSummarizeCalls([...all], { thresholds, ...options });
          const progress = JSON.parse(stored.progress) as SessionProgress;
          const { calls, findings } = summarizeProgress(progress, options);
          expect(findings).toEqual(expected.findings);
          expect(findings).toEqual(
            detect(
              sortItems([...all]).map((entry) => entry.item),
              { thresholds, now: options.aliveUntil },
            ),
          );
          const kept = stored;
          expect(
            calls.map(({ trackCount, ...call }) => {
              const tracks = progress.calls.find((candidate) => candidate.pc === call.pc)?.tracks ?? [];
              expect(trackCount).toBe(tracks.length);
              const joined = (track: string) => joinSeries(kept.series.get(`${call.pc}/${track}`) ?? []);
              return {
                ...call,
                tracks: tracks.map((entry) => ({ ...entry, series: joined(entry.id) })),
                series:
                  call.sampleCount === 0
                    ? { t: [], windowMs: [], score: [], state: [], relayed: [], network: [] }
                    : joined(''),
              };
            }),
          ).toEqual(expected.calls);
          // The whole computation at once (summarizeCalls) is the same code from an empty progress.
          expect(summarizeCalls([...all], { thresholds, ...options })).toEqual({
            calls: expected.calls.map((call) => ({ ...call, trackCount: call.tracks.length })),
            findings: expected.findings,
          });
        },
      ),
      { numRuns: 300 },
    );
  });

  it('recomputes the score from every sample when a longer window arrives, to the last bit', () => {
    const start = startProgress(resolveThresholds({}));
    const at = (t: number, windowMs: number, lossPct: number): PlacedCallItem => ({
      seq: t,
      index: 0,
      item: callSampleSchema.parse({
        t: T0 + t * 1000,
        type: 'call.sample',
        pc: pcs[0],
        windowMs,
        conn: { state: 'connected' },
        tracks: [{ id: 'trk_ai', kind: 'audio', dir: 'in', lossPct, rttMs: 40 }],
      }),
    });
    const first = [at(1, 1000, 3), at(2, 1000, 0.5)];
    const second = [at(7, 5000, 12)];
    expect(addItems(start, first).rescore).toEqual([]);
    const { rescore } = addItems(start, second);
    expect(rescore).toEqual([pcs[0]]);
    rescoreCall(
      start,
      pcs[0] as string,
      [...first, ...second].map((entry) => entry.item as CallSample),
    );
    const expected = referenceSummarizeCalls([...first, ...second], {
      thresholds: resolveThresholds({}),
      aliveUntil: T0 + 7000,
      inactivityMs: 120_000,
    });
    expect(
      summarizeProgress(start, { aliveUntil: T0 + 7000, inactivityMs: 120_000 }).calls[0]?.qualityScore,
    ).toBe(expected.calls[0]?.qualityScore);
  });
});

describe('a late chunk', () => {
  it('is refused when its items come before the last one added, even from a batch of several chunks', () => {
    const thresholds = resolveThresholds({});
    const sampleAt = (seq: number, second: number): PlacedCallItem => ({
      seq,
      index: 0,
      item: callSampleSchema.parse({
        t: T0 + second * 1000,
        type: 'call.sample',
        pc: pcs[0],
        windowMs: 1000,
        conn: { state: 'connected' },
        tracks: [{ id: 'trk_ai', kind: 'audio', dir: 'in', lossPct: 0 }],
      }),
    });
    const progress = startProgress(thresholds);
    addItems(progress, [sampleAt(0, 1)]);
    // Chunks 1 and 3 processed together; chunk 2 arrives after them.
    addItems(progress, [sampleAt(1, 2), sampleAt(3, 4)]);
    expect(comesAfter(progress, [sampleAt(2, 3)])).toBe(false);
    expect(comesAfter(progress, [sampleAt(4, 4)])).toBe(true);
    // Same t as the last item: after it only from a later chunk.
    expect(comesAfter(progress, [{ ...sampleAt(2, 4), seq: 2 }])).toBe(false);
  });
});
