// Traces: OpenTelemetry spans and log records over OTLP/HTTP, and a session's trace trees.
// Other modules import this module only through this file (servers/api/README.md, Layout).

export { sweepExpiredTelemetry } from './retention.ts';
