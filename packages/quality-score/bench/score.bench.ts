/**
 * `pnpm bench`: scores per second for scoreSample and scoreCall over a one-hour call sampled at
 * 1 Hz (3600 samples; audio and video, in and out), next to a baseline measured in the same run
 * (JSON.parse of the same timeline as JSON). Prints ratios; never gates on absolute times.
 */

import { type CallSample, scoreCall, scoreSample, type TrackSample } from '@svc/quality-score';
import { Bench } from 'tinybench';

/** Deterministic pseudo-random numbers (mulberry32), so every run scores the same call. */
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

/** A one-hour call: mostly clean, with a congested stretch every ten minutes and a few freezes. */
function createTimeline(): CallSample[] {
  const random = createRandom(20_261_101);
  const samples: CallSample[] = [];
  for (let second = 0; second < 3600; second++) {
    const congested = second % 600 >= 540;
    const lossPct = congested ? 2 + random() * 10 : random() < 0.9 ? 0 : random() * 1.5;
    const rttMs = 35 + random() * 25 + (congested ? 150 * random() : 0);
    const jitterMs = 2 + random() * (congested ? 30 : 6);
    const audio = (dir: 'in' | 'out'): TrackSample => ({
      kind: 'audio',
      dir,
      lossPct: Math.round(lossPct * 10) / 10,
      rttMs: Math.round(rttMs),
      jitterMs: Math.round(jitterMs * 10) / 10,
      ...(dir === 'in'
        ? { jitterBufferMs: Math.round(40 + jitterMs * 2), concealmentPct: lossPct * 0.8 }
        : {}),
    });
    const frozen = congested && random() < 0.2;
    const video = (dir: 'in' | 'out'): TrackSample => ({
      kind: 'video',
      dir,
      lossPct: Math.round(lossPct * 10) / 10,
      rttMs: Math.round(rttMs),
      fps: congested ? 12 + random() * 12 : 28 + random() * 2,
      h: congested ? 360 : 720,
      ...(dir === 'in'
        ? {
            freezes: frozen ? 1 : 0,
            freezeMs: frozen ? Math.round(200 + random() * 600) : 0,
            frameDropPct: random(),
          }
        : {}),
    });
    samples.push({ windowMs: 1000, tracks: [audio('in'), audio('out'), video('in'), video('out')] });
  }
  return samples;
}

const timeline = createTimeline();
const timelineJson = JSON.stringify(timeline);
let sink = 0;

const bench = new Bench({ name: 'quality-score, one-hour 1 Hz call', time: 1500, warmupTime: 300 });
bench
  .add('JSON.parse (baseline)', () => {
    sink += (JSON.parse(timelineJson) as unknown[]).length;
  })
  .add('scoreSample x 3600', () => {
    for (const sample of timeline) sink += scoreSample(sample) ?? 0;
  })
  .add('scoreCall (3600 samples)', () => {
    sink += scoreCall(timeline) ?? 0;
  });
await bench.run();

function meanMilliseconds(name: string): number {
  const result = bench.getTask(name)?.result;
  if (result === undefined || result.state !== 'completed') throw new Error(`${name}: ${result?.state}`);
  return result.latency.mean;
}

const baseline = meanMilliseconds('JSON.parse (baseline)');
const perSample = meanMilliseconds('scoreSample x 3600');
const perCall = meanMilliseconds('scoreCall (3600 samples)');
const format = (value: number) => Math.round(value).toLocaleString('en-US');

console.log(
  `${bench.name} (${timeline.length} samples, ${timeline.length * 4} tracks, ${format(timelineJson.length / 1024)} KiB of JSON)`,
);
console.log(`node ${process.version}; call score ${scoreCall(timeline)}`);
console.table(bench.table());
console.log(`JSON.parse of the timeline: ${baseline.toFixed(3)} ms per pass`);
console.log(
  `scoreSample: ${format((timeline.length / perSample) * 1000)} samples/s; one pass over the hour takes ${(perSample / baseline).toFixed(2)}x the time of JSON.parse`,
);
console.log(
  `scoreCall:   ${format((timeline.length / perCall) * 1000)} samples/s (${format(1000 / perCall)} hour-long calls/s); ${(perCall / baseline).toFixed(2)}x the time of JSON.parse`,
);
if (sink === Number.MIN_VALUE) console.log(sink);
