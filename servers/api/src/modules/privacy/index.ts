// Privacy: deleting a session everywhere it lives, retention of sessions, calls and telemetry,
// end users' erasure (and their data export). The last module: it reaches into every module that
// stores a session's data. Other code imports this module only through this file
// (servers/api/README.md, Layout).

export { drainBlobDeletions } from './delete-sessions.ts';
export { createErasureWorker, runErasureStep } from './erasure.ts';
export { createRetentionWorker, type PlanRetention, sweepRetention } from './retention.ts';
