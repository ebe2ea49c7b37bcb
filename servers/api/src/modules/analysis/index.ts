// Analysis: a session's transcript (a compact text timeline with evidence ids), the deterministic
// explanations of sessions, calls and issue clusters from written tables of causes, and
// reproductions (steps and a Playwright script). No model: the ai module adds prose on top.
// Other modules import this module only through this file (servers/api/README.md, Layout).

export { type Explanation, explainCall, explainSession } from './explain.ts';
export { type ClusterExplanation, explainCluster } from './explain-cluster.ts';
export { type AnalysisStores, readTranscriptSources } from './session-source.ts';
export { buildTranscript, formatDuration, type Transcript, type TranscriptSources } from './transcript.ts';
export { clusterExplanationSchema, explanationSchema } from './views.ts';
