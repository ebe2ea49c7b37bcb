/**
 * Web vitals (`vital` events, PROTOCOL.md §1) from Google's `web-vitals`: its own chunk, imported
 * once the page has started recording.
 */
import { type Metric, onCLS, onFCP, onINP, onLCP, onTTFB } from 'web-vitals';
import type { WireEvent } from './session-writer.ts';

/**
 * Reports LCP, INP, CLS, FCP and TTFB as `vital` events, each time `web-vitals` reports them
 * (LCP, INP and CLS are final when the page is hidden).
 *
 * @example
 * ```ts
 * watchVitals((event) => gate.push(event));
 * ```
 */
export function watchVitals(emit: (event: WireEvent) => void): void {
  const report = (metric: Metric) =>
    emit({ t: Date.now(), type: 'vital', name: metric.name, value: metric.value, rating: metric.rating });
  for (const watch of [onCLS, onFCP, onINP, onLCP, onTTFB]) watch(report);
}
