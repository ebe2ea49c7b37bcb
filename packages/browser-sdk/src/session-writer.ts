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
  /** Called with the next seq as each seal takes its seq, to keep it across reloads. */
  onSeq?: (nextSeq: number) => void;
  now?: () => number;
}

export interface SessionWriter {
  push(event: WireEvent): void;
  /**
   * Seals the buffered events into one chunk: its seq is taken and its JSON written at once,
   * then it is deflated, stored and queued (seals in that order).
   */
  seal(): Promise<StoredChunk[]>;
  /**
   * The page is leaving: seals the buffered events at once as plain JSON chunks (`json`), split
   * in two until each body is at most `maxBodyBytes` (or holds one event), and takes over the
   * seals still being deflated or stored (same seq, same JSON). Returns them, neither stored
   * nor queued: the caller keeps and sends them before the page is gone.
   */
  sealNow(maxBodyBytes: number): StoredChunk[];
  /** Events buffered and not sealed yet. */
  pending(): number;
}

/** A seal whose seq and JSON are fixed, not stored or queued yet. */
interface Sealing {
  seq: number;
  text: string;
  firstT: number;
  lastT: number;
}

/**
 * Buffers a session's events and seals them into chunks (PROTOCOL.md §1): `seq` 0, 1, 2, ...
 * with no reuse, `meta` on seq 0, `sentAt` when sealed (a chunk's bytes never change after, so a
 * retry is a duplicate, never a conflict), events in time order. A seal takes its seq and writes
 * its JSON synchronously, when it starts: a seal at exit ({@link SessionWriter.sealNow}) can
 * never take the seq of one still being deflated, and sends that one's very JSON instead.
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
  /** Seals started and not queued yet, which `sealNow` takes over. */
  const inFlight = new Set<Sealing>();

  /** The buffered events in time order (the buffer emptied), or none when there is nothing to seal. */
  const take = (): WireEvent[] | undefined => {
    // Seq 0 goes out even without events: it carries the session's meta.
    if (buffer.length === 0 && started) return undefined;
    started = true;
    const events = buffer.sort((a, b) => a.t - b.t);
    buffer = [];
    size = 0;
    return events;
  };

  /** The chunk of `events` as seq `nextSeq` (not taken yet). */
  const draft = (events: WireEvent[]): Sealing => {
    const seq = nextSeq;
    const sentAt = now();
    const text = JSON.stringify({
      v: 1,
      sessionId: options.sessionId,
      ...(options.visitId === undefined ? {} : { visitId: options.visitId }),
      seq,
      sentAt,
      ...(seq === 0 && options.meta !== undefined ? { meta: options.meta } : {}),
      events,
    });
    return { seq, text, firstT: events[0]?.t ?? sentAt, lastT: events.at(-1)?.t ?? sentAt };
  };

  /** Takes a draft's seq, kept across reloads at once: the page may be gone before it is stored. */
  const reserve = (seq: number) => {
    nextSeq = seq + 1;
    options.onSeq?.(nextSeq);
  };

  const chunkOf = ({ text, ...sealed }: Sealing, body: Uint8Array, json?: true): StoredChunk => ({
    sessionId: options.sessionId,
    ...sealed,
    body,
    ...(json ? { json } : {}),
  });

  const writer: SessionWriter = {
    push(event) {
      buffer.push(event);
      size += JSON.stringify(event).length;
      if (buffer.length >= MAX_CHUNK_EVENTS || size >= MAX_CHUNK_JSON) void writer.seal();
    },
    seal() {
      const events = take();
      if (events === undefined) return sealing.then(() => []);
      const sealed = draft(events);
      reserve(sealed.seq);
      inFlight.add(sealed);
      const result = sealing.then(async () => {
        const chunk = chunkOf(sealed, await deflate(sealed.text));
        // Taken over by `sealNow` (the page is leaving): it went as plain JSON.
        if (!inFlight.has(sealed)) return [];
        // Stored before it is sent: a page that dies now sends it on its next load.
        await options.store.put(chunk).catch(() => {});
        if (!inFlight.delete(sealed)) return [];
        options.transport.enqueue(chunk);
        return [chunk];
      });
      sealing = result.catch(() => {});
      return result;
    },
    sealNow(maxBodyBytes) {
      const encode = (sealed: Sealing) => chunkOf(sealed, new TextEncoder().encode(sealed.text), true);
      const chunks = [...inFlight].map(encode);
      inFlight.clear();
      const events = take();
      const parts = events === undefined ? [] : [events];
      while (parts.length > 0) {
        const part = parts.shift() as WireEvent[];
        const chunk = encode(draft(part));
        if (chunk.body.byteLength > maxBodyBytes && part.length > 1) {
          const half = Math.ceil(part.length / 2);
          parts.unshift(part.slice(0, half), part.slice(half));
          continue;
        }
        reserve(chunk.seq);
        chunks.push(chunk);
      }
      return chunks;
    },
    pending() {
      return buffer.length;
    },
  };
  return writer;
}
