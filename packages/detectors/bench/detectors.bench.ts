/**
 * `pnpm bench`: a one-hour call sampled at 1 Hz (one peer connection; audio and video, in and
 * out: 3600 samples, 14,400 track entries) through every detector, reported as track-samples per
 * second next to a baseline measured in the same run: JSON.parse of the same timeline as JSON.
 * Target: detection costs less than half of parsing. Prints ratios; never gates on absolute times.
 */

import { createDetector, type DetectorItem, detect, type TrackSample } from '@svc/detectors';
import { Bench } from 'tinybench';

/** Deterministic pseudo-random numbers (mulberry32), so every run sees the same call. */
function createRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let value = state;
    value = Math.imul(value ^ (value >>> 15), value | 1);
    value ^= value + Math.imul(value ^ (value >>> 7), value | 61);
    return ((value ^ (value >>> 14)) >>> 0) / 4294967296;
  };
}

const T0 = 1_763_700_000_000;
const PC = 'pc_01JD2S5V8Q8C4Y3K2W9T7N6M5H';
const round = (value: number, digits = 1) => Math.round(value * 10 ** digits) / 10 ** digits;

/** One hour: mostly clean, a congested minute every ten (loss, delay, concealment, freezes, lower resolution). */
function createTimeline(): DetectorItem[] {
  const random = createRandom(20_261_101);
  const items: DetectorItem[] = [
    { t: T0, type: 'call.event', pc: PC, name: 'pc_created', state: 'new', tracked: true },
    { t: T0 + 400, type: 'call.event', pc: PC, name: 'connection_state', state: 'connected' },
    { t: T0 + 400, type: 'call.event', pc: PC, name: 'candidate_pair_change', relayed: false, initial: true },
  ];
  for (let second = 1; second <= 3600; second++) {
    const congested = second % 600 >= 540;
    const lossPct = round(congested ? 2 + random() * 10 : random() < 0.9 ? 0 : random() * 1.5);
    const rttMs = round(35 + random() * 25 + (congested ? 300 * random() : 0));
    const frozen = congested && random() < 0.2;
    const height = congested ? 180 : 720;
    const tracks: TrackSample[] = [
      {
        id: 'trk_ai',
        kind: 'audio',
        dir: 'in',
        lossPct,
        rttMs,
        jitterMs: 3,
        concealmentPct: round(lossPct * 0.8),
        stalled: false,
      },
      { id: 'trk_ao', kind: 'audio', dir: 'out', lossPct, rttMs, jitterMs: 3, stalled: false },
      {
        id: 'trk_vi',
        kind: 'video',
        dir: 'in',
        lossPct,
        rttMs,
        fps: congested ? 15 : 30,
        h: height,
        freezes: frozen ? 1 : 0,
        freezeMs: frozen ? Math.round(200 + random() * 600) : 0,
        maxFreezeMs: frozen ? 800 : 0,
        stalled: false,
      },
      {
        id: 'trk_vo',
        kind: 'video',
        dir: 'out',
        lossPct,
        rttMs,
        fps: 30,
        h: height,
        qualityLimitation: congested ? 'bandwidth' : 'none',
        limitedByCpuPct: 0,
        stalled: false,
      },
    ];
    items.push({
      t: T0 + second * 1000,
      type: 'call.sample',
      pc: PC,
      windowMs: 1000,
      conn: { state: 'connected', localType: 'host', remoteType: 'srflx', protocol: 'udp', relayed: false },
      tracks,
    });
  }
  items.push({ t: T0 + 3_600_000, type: 'call.event', pc: PC, name: 'pc_closed', durationMs: 3_600_000 });
  return items;
}

const timeline = createTimeline();
const timelineJson = JSON.stringify(timeline);
const trackSamples = timeline.reduce(
  (sum, item) => sum + (item.type === 'call.sample' ? item.tracks.length : 0),
  0,
);
let sink = 0;
/** Worst case: every sustained run keeps growing and nothing ever fires, so no rule stops early. */
const unreachable = {
  thresholds: {
    lossSustainMs: 600_000,
    rttSustainMs: 600_000,
    concealmentSustainMs: 600_000,
    lowResSustainMs: 600_000,
    oneWayMs: 600_000,
    freezeSingleMs: 60_000,
    minObservedMs: 3_600_000,
  },
};

const bench = new Bench({ name: 'detectors, one-hour 1 Hz call', time: 1500, warmupTime: 300 });
bench
  .add('JSON.parse (baseline)', () => {
    sink += (JSON.parse(timelineJson) as unknown[]).length;
  })
  .add('detect (whole timeline)', () => {
    sink += detect(timeline).length;
  })
  .add('detect, nothing can fire (worst case)', () => {
    sink += detect(timeline, unreachable).length;
  })
  .add('createDetector + push each + advance', () => {
    const detector = createDetector();
    for (const item of timeline) sink += detector.push(item).length;
    sink += detector.advance(T0 + 3_600_000).length;
  });
await bench.run();

function meanMilliseconds(name: string): number {
  const result = bench.getTask(name)?.result;
  if (result === undefined || result.state !== 'completed') throw new Error(`${name}: ${result?.state}`);
  return result.latency.mean;
}

const baseline = meanMilliseconds('JSON.parse (baseline)');
const batch = meanMilliseconds('detect (whole timeline)');
const streaming = meanMilliseconds('createDetector + push each + advance');
const worst = meanMilliseconds('detect, nothing can fire (worst case)');
const format = (value: number) => Math.round(value).toLocaleString('en-US');

console.log(
  `${bench.name} (${timeline.length} items, ${trackSamples} track-samples, ${format(timelineJson.length / 1024)} KiB of JSON)`,
);
console.log(
  `node ${process.version}; findings: ${detect(timeline)
    .map((finding) => finding.kind)
    .join(', ')}`,
);
console.table(bench.table());
console.log(`JSON.parse of the timeline: ${baseline.toFixed(3)} ms per pass`);
for (const [label, time] of [
  ['detect', batch],
  ['push + advance', streaming],
  ['worst case', worst],
] as const) {
  const ratio = time / baseline;
  console.log(
    `${label.padEnd(15)} ${format((trackSamples / time) * 1000)} track-samples/s; ${time.toFixed(3)} ms per hour of call = ${ratio.toFixed(2)}x JSON.parse (target < 0.50x: ${ratio < 0.5 ? 'met' : 'NOT met'})`,
  );
}
if (sink === Number.MIN_VALUE) console.log(sink);
