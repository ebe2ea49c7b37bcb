import type { ChunkStore, StoredChunk } from './chunk-store.ts';
import { deflate } from './compression.ts';
import type { Transport } from './transport.ts';

/** An event as the wire carries it (PROTOCOL.md §1): `t` and `type`, then its fields. */
export type WireEvent = { t: number; type: string } & Record<string, unknown>;

/** A chunk is sealed at this many events... */
export const MAX_CHUNK_EVENTS = 500;
/** ...or this many characters of JSON, whichever comes first (the server takes 16 MiB inflated). */
export const MAX_CHUNK_JSON = 512 * 1024;

export interface SessionWriterOptions {
  sessionId: string;
  visitId?: string;
  /** The seq of the next chunk (0 for a new session; continues after a reload). */
  nextSeq: number;
  /** SessionMeta, sent with seq 0 only. */
  meta?: Record<string, unknown>;
  store: ChunkStore;
  transport: Transport;
  /** Called with the next seq after each seal, to keep it across reloads. */
  onSeq?: (nextSeq: number) => void;
  now?: () => number;
}

export interface SessionWriter {
  push(event: WireEvent): void;
  /**
   * Seals the buffered events into chunks (contiguous seqs), stores and queues them. With
   * `maxBodyBytes`, a chunk whose deflated body is larger is split in two until each fits (or
   * holds one event).
   */
  seal(options?: { maxBodyBytes?: number }): Promise<StoredChunk[]>;
  /** Events buffered and not sealed yet. */
  pending(): number;
}

/**
 * Buffers a session's events and seals them into chunks (PROTOCOL.md §1): `seq` 0, 1, 2, ...
 * with no reuse, `meta` on seq 0, `sentAt` when sealed (a chunk's bytes never change after, so a
 * retry is a duplicate, never a conflict), events in time order. Seals run one after another,
 * so seqs follow the order events were pushed.
 *
 * @example
 * ```ts
 * const writer = createSessionWriter({ sessionId, nextSeq: 0, meta, store, transport });
 * writer.push({ t: Date.now(), type: 'custom', name: 'clicked' });
 * await writer.seal();
 * ```
 */
export function createSessionWriter(options: SessionWriterOptions): SessionWriter {
  const now = options.now ?? Date.now;
  let buffer: WireEvent[] = [];
  let size = 0;
  let nextSeq = options.nextSeq;
  let sealing: Promise<unknown> = Promise.resolve();
  /** Whether seq 0 (the one with `meta`) was sealed or is being sealed. */
  let started = options.nextSeq > 0 || options.meta === undefined;

  async function sealEvents(events: WireEvent[], maxBodyBytes: number | undefined): Promise<StoredChunk[]> {
    const sorted = events.sort((a, b) => a.t - b.t);
    const parts: WireEvent[][] = [sorted];
    const sealed: StoredChunk[] = [];
    while (parts.length > 0) {
      const part = parts.shift() as WireEvent[];
      const seq = nextSeq;
      const chunk = {
        v: 1,
        sessionId: options.sessionId,
        ...(options.visitId === undefined ? {} : { visitId: options.visitId }),
        seq,
        sentAt: now(),
        ...(seq === 0 && options.meta !== undefined ? { meta: options.meta } : {}),
        events: part,
      };
      const body = await deflate(JSON.stringify(chunk));
      if (maxBodyBytes !== undefined && body.byteLength > maxBodyBytes && part.length > 1) {
        const half = Math.ceil(part.length / 2);
        parts.unshift(part.slice(0, half), part.slice(half));
        continue;
      }
      nextSeq = seq + 1;
      const stored: StoredChunk = {
        sessionId: options.sessionId,
        seq,
        body,
        firstT: part[0]?.t ?? chunk.sentAt,
        lastT: part.at(-1)?.t ?? chunk.sentAt,
      };
      // Stored before it is sent: a page that dies now sends it on its next load.
      await options.store.put(stored).catch(() => {});
      options.onSeq?.(nextSeq);
      options.transport.enqueue(stored);
      sealed.push(stored);
    }
    return sealed;
  }

  const writer: SessionWriter = {
    push(event) {
      buffer.push(event);
      size += JSON.stringify(event).length;
      if (buffer.length >= MAX_CHUNK_EVENTS || size >= MAX_CHUNK_JSON) void writer.seal();
    },
    seal(sealOptions = {}) {
      // Seq 0 goes out even without events: it carries the session's meta.
      if (buffer.length === 0 && started) return sealing.then(() => []);
      started = true;
      const events = buffer;
      buffer = [];
      size = 0;
      const result = sealing.then(() => sealEvents(events, sealOptions.maxBodyBytes));
      sealing = result.catch(() => {});
      return result;
    },
    pending() {
      return buffer.length;
    },
  };
  return writer;
}
