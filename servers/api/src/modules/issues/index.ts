// Issues: clusters of findings and errors across sessions, their fingerprints and routes.
// Other modules import this module only through this file (servers/api/README.md, Layout).

export { errorOccurrence, findingOccurrences, recordOccurrences } from './clusters.ts';
