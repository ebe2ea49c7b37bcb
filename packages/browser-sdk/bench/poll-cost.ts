/**
 * What one 1 Hz poll of the WebRTC collector costs the page's main thread, against what the
 * `getStats()` calls it makes cost, in the same page and the same run (`pnpm bench`).
 *
 * Headless Chromium, 8 loopback calls (16 peer connections, fake camera and microphone, audio
 * and video both ways); the collector tracks the 8 callers (2 tracks out, 2 in each). Once a
 * second, `measurePoll` (src/webrtc/__fixtures__/call-page.ts) times the 8 `getStats()` calls
 * (wall time, made together as the collector makes them), then the collector's poll on those
 * same reports with `getStats()` already resolved: its reading of the reports (Chromium builds
 * each stats object on first access: some 30 per connection here), differencing, track
 * following, detectors, scoring and emitting, all synchronous main-thread work. Default settings
 * (`sampleIntervalSec` 5), so one poll in five also builds and emits the 5 s samples.
 *
 * Prints the median and p95 of each and their ratio; absolute times depend on the machine, the
 * ratio much less. Nothing is asserted.
 *
 * Environment: BENCH_POLLS (measured polls, default 60), BENCH_PAIRS (calls, default 8).
 */

import { launchCollectorBrowser } from './chromium.ts';

const PAIRS = Number(process.env.BENCH_PAIRS ?? 8);
const POLLS = Number(process.env.BENCH_POLLS ?? 60);
/** Polls before measuring: the first sees every stream anew (track_added for all). */
const WARM_UP = 3;
/** Small video (320×240 at 15 fps): 16 encoders on a 2-core machine stay out of CPU limits. */
const VIDEO = { width: 320, height: 240, frameRate: 15 };

function quantile(values: number[], share: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil(share * sorted.length) - 1)] as number;
}

const chromium = await launchCollectorBrowser();
try {
  const { page } = await chromium.open();
  const measured = await page.evaluate(
    async ({ pairs, polls, warmUp, video }) => {
      const { callPage } = window;
      callPage.start({ instrument: false });
      const callers: RTCPeerConnection[] = [];
      for (let pair = 0; pair < pairs; pair += 1) {
        const index = await callPage.call({ bothWays: true, video });
        const { caller } = callPage.calls[index] as { caller: RTCPeerConnection };
        callPage.attach(caller);
        callers.push(caller);
      }
      await callPage.follow(pairs * 4);
      const results: Array<{ statsMs: number; collectorMs: number }> = [];
      for (let poll = 0; poll < warmUp + polls; poll += 1) {
        await callPage.wait(1_000);
        const result = await callPage.measurePoll(callers);
        if (poll >= warmUp) results.push(result);
      }
      const samples = callPage.emitted().filter((event) => event.type === 'call.sample').length;
      return { results, samples, isolated: crossOriginIsolated };
    },
    { pairs: PAIRS, polls: POLLS, warmUp: WARM_UP, video: VIDEO },
  );
  const stats = measured.results.map((result) => result.statsMs);
  const collector = measured.results.map((result) => result.collectorMs);
  const row = (label: string, median: string, p95: string) =>
    `${label.padEnd(34)}${median.padStart(10)}${p95.padStart(10)}`;
  const ms = (value: number) => `${value.toFixed(3)} ms`;
  console.log(
    `\nWebRTC collector poll cost: ${PAIRS} tracked connections (${PAIRS} loopback calls, audio and ` +
      `video both ways, ${VIDEO.width}×${VIDEO.height} at ${VIDEO.frameRate} fps), ${POLLS} polls at 1 Hz, ` +
      `headless Chromium ${chromium.browser.version()}${measured.isolated ? '' : ' (timer resolution 100 µs)'}\n`,
  );
  console.log(row('', 'median', 'p95'));
  console.log(row(`getStats() ×${PAIRS}, wall time`, ms(quantile(stats, 0.5)), ms(quantile(stats, 0.95))));
  console.log(
    row('collector processing of one poll', ms(quantile(collector, 0.5)), ms(quantile(collector, 0.95))),
  );
  console.log(
    row(
      'ratio collector / getStats()',
      (quantile(collector, 0.5) / quantile(stats, 0.5)).toFixed(3),
      (quantile(collector, 0.95) / quantile(stats, 0.95)).toFixed(3),
    ),
  );
  console.log(`\n(${measured.samples} call.sample events emitted during the run)`);
} finally {
  await chromium.close();
}
