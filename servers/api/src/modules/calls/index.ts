// Calls: what a session's WebRTC calls became (rows, series, findings), their queries, views and routes, and the incremental computation that processing runs.
// Other modules import this module only through this file (servers/api/README.md, Layout).

export {
  addItems,
  type CallFacts,
  comesAfter,
  type PlacedCallItem,
  PROGRESS_VERSION,
  rescoreCall,
  type SeriesPiece,
  type SessionProgress,
  sameThresholds,
  sortItems,
  startProgress,
  summarizeProgress,
} from './call-progress.ts';
export {
  type CALL_COLUMNS,
  type CallJobInput,
  claimAndLoadCallJobs,
  deleteCallProgress,
  deleteSeriesPieces,
  findCallItems,
  findCallSamples,
  findChunksAfter,
  findErrorSignals,
  foldSeriesPieces,
  insertSeriesPieces,
  KEPT_CALL_COLUMNS,
  loadCallJob,
  type SeriesPieces,
  type SessionChunk,
  type StoredCallProgress,
  saveCallProgress,
  seriesPiecesRow,
  writeIncrementalJob,
} from './call-progress-repository.ts';
export { DEFAULT_CALLS_LIMIT, findCallsPage, findSessionFindings, MAX_CALLS_LIMIT } from './call-queries.ts';
export { emptyConnectionSeries } from './summarize-calls.ts';
export { callSummarySchema, toCallSummary } from './views.ts';
