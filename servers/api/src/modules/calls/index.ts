// Calls: what a session's WebRTC calls became (rows, series, findings), their queries, views and
// routes, and the calls step of a session's processing.
// Other modules import this module only through this file (servers/api/README.md, Layout).

export {
  type CallSessionFacts,
  deleteCallProgress,
  liveCallsStatement,
  writeLiveCalls,
} from './call-progress-repository.ts';
export {
  callOverview,
  DEFAULT_CALLS_LIMIT,
  findCallDetail,
  findCallsPage,
  findSessionFindings,
  MAX_CALLS_LIMIT,
} from './call-queries.ts';
export {
  CALLS_INPUT,
  type CallsInput,
  type CallsStepResult,
  planCalls,
} from './calls-step.ts';
export { callSummarySchema, toCallDetail, toCallSummary } from './views.ts';
