// Issues: clusters of findings and errors across sessions, their fingerprints and routes.
// Other modules import this module only through this file (servers/api/README.md, Layout).

export { parseStackFrames } from './fingerprint.ts';
export {
  ISSUES_INPUT,
  type IssuesInput,
  occurrencesChanged,
  recordSessionIssues,
  symbolicateSessionErrors,
} from './issues-step.ts';
export {
  findCluster,
  findClustersPage,
  findLatestClusterError,
} from './repository.ts';
export { withCount, withCounts } from './views.ts';
