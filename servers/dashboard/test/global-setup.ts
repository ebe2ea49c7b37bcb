import { buildIfStale } from '../scripts/build-if-stale.ts';

/** Builds the dashboard once per test run (when its sources changed), before any test opens it. */
export default async function setup(): Promise<void> {
  await buildIfStale();
}
