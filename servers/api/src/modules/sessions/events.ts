import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import type { Project } from '../../platform/database/tables/projects.table.ts';
import { chunkEvents, readChunkBytes } from './chunk-reader.ts';
import { type EventPosition, listChunks } from './session-queries.ts';
import type { FlatEvent } from './views.ts';

/**
 * Most chunks one events request opens. A page that filters on a rare type stops there and
 * answers what it found with a `nextCursor` to go on from, so one request costs bounded work.
 */
export const MAX_CHUNKS_PER_EVENTS_PAGE = 64;

type FlatEventEvent = FlatEvent['event'];

function isEvent(value: unknown): value is FlatEventEvent {
  if (typeof value !== 'object' || value === null) return false;
  const { t, type } = value as { t?: unknown; type?: unknown };
  return typeof t === 'number' && typeof type === 'string';
}

/**
 * One page of a session's events in (seq, index) order, after `after`: chunks are opened one
 * at a time from the cursor's seq on, only as far as the page needs (plus one event, to know
 * whether there is more). `next` is set when there may be more.
 */
export async function readEventsPage(
  fastify: Pick<FastifyInstance, 'blobStore' | 'masterKey' | 'database'>,
  log: FastifyBaseLogger,
  project: Pick<Project, 'id' | 'wrapped_data_key'>,
  sessionId: string,
  options: { types?: ReadonlySet<string>; after?: EventPosition; limit: number },
): Promise<{ items: FlatEvent[]; next?: EventPosition }> {
  const { after, types, limit } = options;
  const chunks = await listChunks(fastify.database, project.id, sessionId, {
    fromSeq: after?.seq ?? 0,
    limit: MAX_CHUNKS_PER_EVENTS_PAGE + 1,
  });
  const items: FlatEvent[] = [];
  let scannedTo: EventPosition | undefined;
  for (const chunk of chunks.slice(0, MAX_CHUNKS_PER_EVENTS_PAGE)) {
    const events = chunkEvents(await readChunkBytes(fastify, log, project, chunk), chunk);
    const start = after !== undefined && chunk.seq === after.seq ? after.index + 1 : 0;
    for (let index = start; index < events.length; index += 1) {
      const event = events[index];
      if (!isEvent(event) || (types !== undefined && !types.has(event.type))) continue;
      if (items.length === limit) {
        const last = items[limit - 1] as FlatEvent;
        return { items, next: { seq: last.seq, index: last.index } };
      }
      items.push({ seq: chunk.seq, index, event });
    }
    scannedTo = { seq: chunk.seq, index: Math.max(events.length - 1, 0) };
  }
  if (chunks.length > MAX_CHUNKS_PER_EVENTS_PAGE && scannedTo !== undefined) {
    const last = items.at(-1);
    return {
      items,
      next: items.length === limit && last !== undefined ? { seq: last.seq, index: last.index } : scannedTo,
    };
  }
  return { items };
}
