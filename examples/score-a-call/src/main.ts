// Usage: pnpm start [path/to/chunk.json]
// Without a path, scores the call chunk recorded from real Chromium 156 calls that ships with
// @svc/protocol's conformance fixtures.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { formatReports, scoreChunk } from './score-calls.ts';

const path =
  process.argv[2] ?? createRequire(import.meta.url).resolve('@svc/protocol/fixtures/valid/Chunk/call.json');
const result = scoreChunk(JSON.parse(readFileSync(path, 'utf8')));
if (!result.success) {
  console.error(`The chunk is not valid protocol v1: ${result.error}`);
  process.exit(1);
}
console.log(`Scored ${result.reports.length} peer connections from ${path}\n`);
console.log(formatReports(result.reports));
if (result.skippedEvents > 0) console.log(`\n${result.skippedEvents} events of unknown types were skipped.`);
