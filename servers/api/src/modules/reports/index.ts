// Reports: anomalies of a project's hourly rates and its daily and weekly digests, run as AI jobs
// (the `anomaly_scan` and `digest` handlers), and `GET /v1/ai/digests`.
// Other modules import this module only through this file (servers/api/README.md, Layout).

export { createReportJobHandlers } from './report-jobs.ts';
