// Sessions: ingest, stored chunks, session reading, visits and share links.
// Other modules import this module only through this file (servers/api/README.md, Layout).

export { type ChunkReadLog, chunkEvents, readChunkBytes } from './chunk-reader.ts';
export { loadSessionDetail } from './detail.ts';
export { sessionIdSchema } from './query.ts';
export { readBody } from './request-body.ts';
export {
  containsPattern,
  findActiveShareLink,
  findSession,
  listChunks,
  severitiesAtLeast,
} from './session-queries.ts';
