// Insights: what product teams ask of a replay tool, aggregated from the sessions' events: page
// views and their routes, clicks (rage and dead clicks), scroll depth, web vitals, funnels and
// releases. It reads sessions, calls and issues and sends through notifications; its facts job
// (facts-job.ts) runs on its own queue, beside processing's. Other modules import this module only through this file (servers/api/README.md, Layout).

export {
  findDeadClicks,
  findRageClicks,
  type Interaction,
  toInteractions,
} from './clicks.ts';
export { applyMutation, type DomMirror, type MirrorContent, mirrorOf } from './dom-mirror.ts';
export {
  claimFactsJobs,
  createFactsWorker,
  type FactsWorker,
  runFactsJob,
} from './facts-job.ts';
export { createRegressionWorker } from './regressions.ts';
export { normalizeRoute } from './route.ts';
export { type IndexedNode, indexSnapshot, type SnapshotNode, selectorOf } from './selector.ts';
export { isRegression, normalUpperTail, twoProportionTest } from './stats.ts';
export { rateVital, summarizeVital } from './vitals.ts';
