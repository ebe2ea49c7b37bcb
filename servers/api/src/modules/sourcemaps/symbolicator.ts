import type { TraceMap } from '@jridgewell/trace-mapping';
import type { Kysely } from 'kysely';
import { LRUCache } from 'lru-cache';
import type { BlobStore } from '../../platform/blob-store/index.ts';
import type { Database } from '../../platform/database/schema.ts';
import { candidateUrls, checkSourceMap } from './files.ts';
import { findMapFor } from './repository.ts';
import { type InputFrame, type OutputFrame, symbolicateFrames } from './symbolicate.ts';

/** Bytes of parsed maps a process keeps in memory (counted as three times a map's size). */
const SYMBOLICATION_CACHE_BYTES = 64 * 1024 * 1024;

/** Symbolication of one server process: the maps of every project, with one cache. */
export interface Symbolicator {
  /**
   * Maps `frames` through the project's source maps: a frame's map by the debug id of its
   * bundle, else by `release` and URL (see repository.ts); a frame without one comes back as it
   * was with `mapped: false`.
   */
  symbolicate(
    projectId: string,
    release: string | undefined,
    frames: readonly InputFrame[],
  ): Promise<OutputFrame[]>;
}

/**
 * The process's symbolicator, shared by `POST /v1/symbolicate` and the processing of sessions'
 * errors. Parsed maps are kept by file id in an LRU bounded by bytes (`lru-cache`); requests that
 * need the same cold map at once load and parse it once.
 *
 * @example
 * ```ts
 * const symbolicator = createSymbolicator({ database, blobStore });
 * const frames = await symbolicator.symbolicate(project.id, '1.4.0', [{ file: 'https://shop.example.com/assets/index-BxY7kQ_z.js', line: 1, column: 4821 }]);
 * ```
 */
export function createSymbolicator(
  dependencies: { database: Kysely<Database>; blobStore: BlobStore },
  options: { cacheBytes?: number } = {},
): Symbolicator {
  const { database, blobStore } = dependencies;
  const maps = new LRUCache<string, { map: TraceMap; bytes: number }, { blobKey: string }>({
    maxSize: options.cacheBytes ?? SYMBOLICATION_CACHE_BYTES,
    sizeCalculation: (entry) => entry.bytes,
    fetchMethod: async (_id, _stale, { context }) => {
      const bytes = await blobStore.get(context.blobKey);
      if (bytes === null) return undefined;
      const checked = checkSourceMap(Buffer.from(bytes).toString('utf8'));
      // A parsed map holds its text, decoded segments and names: about three times its size.
      return checked.ok ? { map: checked.map, bytes: Math.max(1, bytes.length * 3) } : undefined;
    },
  });
  return {
    symbolicate(projectId, release, frames) {
      return symbolicateFrames(frames, async (file) => {
        const row = await findMapFor(database, projectId, candidateUrls(file), release);
        if (row === undefined) return undefined;
        return (await maps.fetch(row.id, { context: { blobKey: row.blob_key } }))?.map;
      });
    },
  };
}
