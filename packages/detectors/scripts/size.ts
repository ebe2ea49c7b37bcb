/**
 * Prints the minified + gzipped size of the main entry (and of a detect-only import):
 * `pnpm --filter @svc/detectors run size`.
 */
import { bundleSize, WHOLE_MAIN_ENTRY } from './bundle-size.ts';

const format = (bytes: number) => `${bytes.toLocaleString('en-US')} B`;
for (const [label, source] of [
  ['whole main entry', WHOLE_MAIN_ENTRY],
  ['detect only', "export { detect } from '@svc/detectors';"],
  ['createDetector + triggerName', "export { createDetector, triggerName } from '@svc/detectors';"],
  ['triggerName only', "export { triggerName } from '@svc/detectors';"],
] as const) {
  const size = await bundleSize(source);
  console.log(`${label}: ${format(size.minifiedBytes)} minified, ${format(size.gzipBytes)} min+gzip`);
}
