// AI: the AI jobs (the durable queue of scheduled and long work: anomaly scans, digests,
// explanations), their worker and scheduler, and `GET /v1/ai/jobs/{id}`.
// Other modules import this module only through this file (servers/api/README.md, Layout).

export { type AiJobHandlers, createAiJobWorker } from './job-worker.ts';
export { anomalyScanInputSchema, digestInputSchema, type JsonValue, queueAiJob } from './jobs.ts';
export { type ReadTool, runTool, type ToolContext, toolsFor } from './tools.ts';
