// Processing: the job after ingest, one per session, run in steps (calls, issues, custom events)
// by any number of workers (servers/api/docs/processing.md).
// Other modules import this module only through this file (servers/api/README.md, Layout).

export {
  claimProcessingBatch,
  claimProcessingJobs,
  queueReprocessing,
} from './jobs.ts';
export { type ProcessingDependencies, type ProcessingResult, processSessionJob } from './process-session.ts';
export {
  createProcessingWorker,
  type ProcessingWorker,
} from './worker.ts';
