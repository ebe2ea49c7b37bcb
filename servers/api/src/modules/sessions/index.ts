// Sessions: ingest, stored chunks, session reading, visits and share links.
// Other modules import this module only through this file (servers/api/README.md, Layout).

export { chunkEvents, readChunkBytes } from './chunk-reader.ts';
export { readBody } from './request-body.ts';
export { containsPattern, findActiveShareLink, severitiesAtLeast } from './session-queries.ts';
