import { Replayer } from '@rrweb/replay';
import { type Gap, gapAt, isInteraction } from './timeline.ts';
import type { ChunkManifestEntry, StoredChunk, WireEvent } from './types.ts';

// The replay engine: rrweb's Replayer fed with the session's chunks as playback needs them.
//
// A seek (and the first frame) finds the chunk holding the target time, walks back chunk by chunk
// to the full snapshot at or before it (the SDK takes one at every checkout, 30 s by default:
// rrweb Meta (4) then FullSnapshot (2)), builds a Replayer from there with a few chunks ahead,
// and appends later chunks with `addEvent` while it plays. A 2-hour session therefore costs its
// first frame what a 1-minute one does: a few chunks. Time is kept in milliseconds from the
// session's start ("offset"); rrweb's own clock starts at the first event it was given.

/** A recorded rrweb event as the Replayer takes it. */
interface RrwebEvent {
  type: number;
  timestamp: number;
  data: unknown;
  [field: string]: unknown;
}

const FULL_SNAPSHOT = 2;
const META = 4;
/** Chunks appended ahead of the playhead: about this much time is always loaded. */
const LOOKAHEAD_MS = 45_000;
/** How many chunks are fetched at once ahead of the playhead. */
const PREFETCH_CHUNKS = 3;
/** Gaps of inactivity longer than this are fast-forwarded when "Skip inactivity" is on. */
export const INACTIVITY_THRESHOLD_MS = 10_000;

/** Skipping inactivity lands this long before the next interaction. */
const INACTIVITY_SKIP_LANDING_MS = 1000;

export const SPEEDS = [0.5, 1, 2, 4, 8, 16] as const;

/** What the controls show. */
export interface PlayerState {
  /** Milliseconds from the session's start. */
  offset: number;
  playing: boolean;
  /** Waiting for chunks (the first frame, a seek, or playback past the loaded part). */
  loading: boolean;
  speed: number;
  skipInactive: boolean;
  /** The last gap playback jumped over, or the inactivity it skipped. */
  skipped?: Gap;
  ended: boolean;
  error?: string;
}

export interface ReplayOptions {
  /** Where the Replayer puts its iframe. */
  root: HTMLElement;
  startedAt: number;
  durationMs: number;
  chunks: ChunkManifestEntry[];
  gaps: Gap[];
  loadChunk(seq: number): Promise<StoredChunk>;
  /** Every chunk once, when it arrives (the share view takes its markers from them). */
  onChunk?(chunk: StoredChunk): void;
  /** Once: the first frame is shown, or could not be. */
  onSettled?(): void;
  skipInactive: boolean;
  /**
   * `viewport` (the player): the recorded viewport scaled to fit the root. `page` (the heatmaps):
   * the iframe as tall as the recorded document, so the whole page shows, scaled to the root's
   * width; `onLayout` then gets the scale and the page's size.
   */
  layout?: 'viewport' | 'page';
  onLayout?(layout: PageLayout): void;
}

/** Where the recorded page is drawn (the `page` layout): its size in its own px and the scale. */
export interface PageLayout {
  scale: number;
  width: number;
  height: number;
}

function rrwebEventsOf(chunk: StoredChunk): RrwebEvent[] {
  return chunk.events
    .filter((event: WireEvent) => event.type === 'rrweb' && typeof event.data === 'object')
    .map((event) => {
      const data = event.data as RrwebEvent;
      return { ...data, timestamp: typeof data.timestamp === 'number' ? data.timestamp : event.t };
    });
}

function timeOf(chunk: ChunkManifestEntry | undefined, field: 'firstEventAt' | 'lastEventAt') {
  const value = chunk?.[field] ?? chunk?.receivedAt;
  return value === undefined ? Number.NaN : Date.parse(value);
}

/**
 * rrweb calls `play()` on the recorded page's `<video>` and `<audio>` elements without handling
 * the promise, which rejects when a pause follows at once (seeking, skipping) or the media cannot
 * load (a call's MediaStream is never recorded): an unhandled rejection each time. The replayed
 * document's `play` is wrapped to handle it; playback itself is unchanged.
 */
function quietMediaPlayback(iframe: HTMLIFrameElement): void {
  const view = iframe.contentWindow as (Window & { HTMLMediaElement?: typeof HTMLMediaElement }) | null;
  const prototype = view?.HTMLMediaElement?.prototype;
  if (prototype === undefined) return;
  const play = prototype.play;
  prototype.play = function playQuietly(this: HTMLMediaElement) {
    const playing = play.call(this);
    playing?.catch(() => undefined);
    return playing;
  };
}

export class ReplayController {
  private readonly options: ReplayOptions;
  private readonly chunks: ChunkManifestEntry[];
  private readonly cache = new Map<number, Promise<StoredChunk>>();
  private replayer: Replayer | undefined;
  /** Epoch ms of the Replayer's first event (its time 0). */
  private replayerStart = 0;
  /** Index in `chunks` of the last chunk given to the Replayer. */
  private appended = -1;
  private appending = false;
  /** rrweb ran out of events before the next chunks arrived: playback resumes when they do. */
  private waitingForChunks = false;
  /** Bumped by every rebuild: work of an older one stops. */
  private generation = 0;
  private state: PlayerState;
  private readonly listeners = new Set<(state: PlayerState) => void>();
  private readonly timer: ReturnType<typeof setInterval>;
  private resizeObserver: ResizeObserver | undefined;
  private dimensions = { width: 1280, height: 720 };
  /** Epoch ms of every user interaction in the chunks loaded so far, sorted. */
  private interactions: number[] = [];

  constructor(options: ReplayOptions) {
    this.options = options;
    this.chunks = [...options.chunks].sort((left, right) => left.seq - right.seq);
    this.state = {
      offset: 0,
      playing: false,
      loading: true,
      speed: 1,
      skipInactive: options.skipInactive,
      ended: false,
    };
    this.timer = setInterval(() => this.tick(), 100);
    if (typeof ResizeObserver !== 'undefined') {
      this.resizeObserver = new ResizeObserver(() => this.fit());
      this.resizeObserver.observe(options.root);
    }
  }

  subscribe(listener: (state: PlayerState) => void): () => void {
    this.listeners.add(listener);
    listener(this.state);
    return () => this.listeners.delete(listener);
  }

  private update(changes: Partial<PlayerState>): void {
    this.state = { ...this.state, ...changes };
    for (const listener of this.listeners) listener(this.state);
  }

  destroy(): void {
    this.generation += 1;
    clearInterval(this.timer);
    this.resizeObserver?.disconnect();
    this.replayer?.destroy();
    this.replayer = undefined;
    this.listeners.clear();
  }

  private chunk(index: number): Promise<StoredChunk> {
    const entry = this.chunks[index];
    if (entry === undefined) return Promise.reject(new Error(`no chunk at ${index}`));
    let loading = this.cache.get(entry.seq);
    if (loading === undefined) {
      loading = this.options.loadChunk(entry.seq).then((chunk) => {
        const times = chunk.events.filter(isInteraction).map((event) => event.t);
        if (times.length > 0) this.interactions = [...this.interactions, ...times].sort((a, b) => a - b);
        this.options.onChunk?.(chunk);
        return chunk;
      });
      // A failed fetch is tried again on the next need.
      loading.catch(() => this.cache.delete(entry.seq));
      this.cache.set(entry.seq, loading);
    }
    return loading;
  }

  /** The index of the chunk playing at `time` (epoch ms): the last one that starts at or before it. */
  private chunkIndexAt(time: number): number {
    let found = 0;
    this.chunks.forEach((chunk, index) => {
      if (timeOf(chunk, 'firstEventAt') <= time) found = index;
    });
    return found;
  }

  /** Where playback is now, in ms from the session's start. */
  currentOffset(): number {
    if (this.replayer === undefined || !this.state.playing || this.state.loading) return this.state.offset;
    return this.replayerStart - this.options.startedAt + this.replayer.getCurrentTime();
  }

  /** Moves to `offset` (ms from the session's start) and plays from there or stays paused. */
  async seek(offset: number, play = this.state.playing): Promise<void> {
    const target = Math.min(Math.max(0, offset), this.options.durationMs);
    const time = this.options.startedAt + target;
    this.update({ offset: target, ended: false, playing: play });
    const loadedEnd = timeOf(this.chunks[this.appended], 'lastEventAt');
    // While a Replayer is being built (or waits for chunks), a new target builds anew: the one in
    // progress would otherwise land on the older target.
    const settled = this.replayer !== undefined && !this.state.loading;
    if (settled && time >= this.replayerStart && time <= loadedEnd) {
      this.position(time, play);
      return;
    }
    await this.rebuild(time, play);
  }

  private position(time: number, play: boolean): void {
    if (this.replayer === undefined) return;
    const at = Math.max(0, time - this.replayerStart);
    if (play) this.replayer.play(at);
    else this.replayer.pause(at);
  }

  /** A new Replayer from the full snapshot at or before `time`, with a few chunks ahead. */
  private async rebuild(time: number, play: boolean): Promise<void> {
    const generation = ++this.generation;
    this.waitingForChunks = false;
    this.update({ loading: true, error: undefined });
    try {
      const target = this.chunkIndexAt(time);
      let first = target;
      let events: RrwebEvent[] = [];
      let base = -1;
      // Walk back to a full snapshot at or before the target time.
      for (;;) {
        const chunk = await this.chunk(first);
        if (generation !== this.generation) return;
        events = [...rrwebEventsOf(chunk), ...events];
        base = events.findLastIndex((event) => event.type === FULL_SNAPSHOT && event.timestamp <= time);
        if (base >= 0 || first === 0) break;
        first -= 1;
      }
      let last = target;
      if (base < 0) {
        // Nothing full before the target (the first chunks are missing): start at the first
        // full snapshot after it.
        for (;;) {
          base = events.findIndex((event) => event.type === FULL_SNAPSHOT);
          if (base >= 0 || last >= this.chunks.length - 1) break;
          last += 1;
          events = [...events, ...rrwebEventsOf(await this.chunk(last))];
          if (generation !== this.generation) return;
        }
        if (base < 0)
          throw new Error(
            'The page was not recorded in this session (no full snapshot to start from): its events are listed beside.',
          );
        time = Math.max(time, events[base]?.timestamp ?? time);
      }
      // The checkout's Meta event (the viewport) comes right before its full snapshot.
      const metaIndex = events.findLastIndex((event, index) => index <= base && event.type === META);
      const from = metaIndex >= 0 && base - metaIndex <= 3 ? metaIndex : base;
      // A few chunks ahead, fetched together.
      const ahead: Promise<StoredChunk>[] = [];
      for (let index = last + 1; index < this.chunks.length && index <= last + PREFETCH_CHUNKS; index++) {
        if (timeOf(this.chunks[index], 'firstEventAt') > time + LOOKAHEAD_MS && index > last + 1) break;
        ahead.push(this.chunk(index));
      }
      for (const chunk of await Promise.all(ahead)) events.push(...rrwebEventsOf(chunk));
      if (generation !== this.generation) return;
      last += ahead.length;
      const replayable = events.slice(from);
      if (replayable.length < 2) replayable.push({ ...replayable[0], type: 5, data: {} } as RrwebEvent);
      this.replayer?.destroy();
      this.options.root.replaceChildren();
      const replayer = new Replayer(replayable as never, {
        root: this.options.root,
        // Inactivity is skipped here (tick), not by rrweb: its fast-forward only starts on the
        // next event it plays, so turning it on in the middle of a quiet stretch did nothing.
        skipInactive: false,
        speed: this.state.speed,
        showWarning: false,
        mouseTail: false,
        UNSAFE_replayCanvas: false,
        triggerFocus: false,
      });
      replayer.iframe.title = 'The recorded page, replayed';
      quietMediaPlayback(replayer.iframe);
      replayer.on('resize', (dimension) => {
        this.dimensions = dimension as { width: number; height: number };
        this.fit();
      });
      replayer.on('finish', () => this.finished());
      this.replayer = replayer;
      this.replayerStart = replayable[0]?.timestamp ?? time;
      this.appended = last;
      this.update({ loading: false, offset: time - this.options.startedAt });
      this.position(time, play);
      this.fit();
      this.settle();
    } catch (error) {
      if (generation !== this.generation) return;
      this.update({ loading: false, playing: false, error: (error as Error).message });
      this.settle();
    }
  }

  private settled = false;

  private settle(): void {
    if (this.settled) return;
    this.settled = true;
    this.options.onSettled?.();
  }

  /** Scales rrweb's wrapper (the recorded viewport's size) to the width of the root. */
  private fit(): void {
    const wrapper = this.replayer?.wrapper;
    if (wrapper === undefined) return;
    const width = this.options.root.clientWidth || this.dimensions.width;
    if (this.options.layout === 'page') {
      this.fitPage(wrapper, width);
      return;
    }
    // The whole recorded viewport in view, with room for the controls under it.
    const height = Math.max(240, (typeof window === 'undefined' ? 900 : window.innerHeight) * 0.45);
    const scale = Math.min(1, width / this.dimensions.width, height / this.dimensions.height);
    wrapper.style.transform = `scale(${scale})`;
    wrapper.style.transformOrigin = 'top left';
    this.options.root.style.height = `${Math.ceil(this.dimensions.height * scale)}px`;
  }

  /** The `page` layout: the iframe as tall as the replayed document, scaled to the root's width. */
  private fitPage(wrapper: HTMLElement, width: number): void {
    const iframe = this.replayer?.iframe;
    const document = iframe?.contentDocument;
    if (iframe === undefined) return;
    const height = Math.max(
      this.dimensions.height,
      document?.documentElement?.scrollHeight ?? 0,
      document?.body?.scrollHeight ?? 0,
    );
    iframe.setAttribute('height', String(height));
    const scale = Math.min(1, width / this.dimensions.width);
    wrapper.style.transform = `scale(${scale})`;
    wrapper.style.transformOrigin = 'top left';
    this.options.root.style.height = `${Math.ceil(height * scale)}px`;
    this.options.onLayout?.({ scale, width: this.dimensions.width, height });
  }

  /** Measures and scales again (the `page` layout after the replayed page's images load). */
  relayout(): void {
    this.fit();
  }

  /** rrweb played its last event: more chunks to come, or the end of the session. */
  private finished(): void {
    if (this.appended < this.chunks.length - 1) {
      // Resumed by the append that brings the next chunks (this one, or one in flight).
      this.waitingForChunks = true;
      this.update({ loading: true, offset: this.currentOffset() });
      void this.appendAhead();
      return;
    }
    this.update({ playing: false, ended: true, offset: this.currentOffset() });
  }

  /** Appends the next chunks while the loaded part ends less than the lookahead ahead. */
  private async appendAhead(): Promise<void> {
    if (this.appending || this.replayer === undefined) return;
    const generation = this.generation;
    this.appending = true;
    try {
      const next = this.appended + 1;
      if (next >= this.chunks.length) return;
      const wanted: number[] = [];
      for (let index = next; index < this.chunks.length && index < next + PREFETCH_CHUNKS; index++)
        wanted.push(index);
      const loaded = await Promise.all(wanted.map((index) => this.chunk(index)));
      if (generation !== this.generation || this.replayer === undefined) return;
      const resumeAt = this.replayer.getCurrentTime();
      for (const chunk of loaded)
        for (const event of rrwebEventsOf(chunk)) this.replayer.addEvent(event as never);
      this.appended = next + loaded.length - 1;
      if (this.waitingForChunks) {
        this.waitingForChunks = false;
        if (this.state.playing) this.replayer.play(resumeAt);
        this.update({ loading: false });
      }
    } catch (error) {
      this.update({ error: (error as Error).message, loading: false });
    } finally {
      this.appending = false;
    }
  }

  private tick(): void {
    if (this.replayer === undefined || this.state.loading || !this.state.playing) return;
    const offset = this.currentOffset();
    const gap = gapAt(this.options.gaps, offset);
    if (gap !== undefined) {
      // Never silently joined: playback jumps over what was not recorded, and says so.
      this.update({ skipped: gap });
      void this.seek(gap.to, true);
      return;
    }
    const now = this.options.startedAt + offset;
    const loadedEnd = timeOf(this.chunks[this.appended], 'lastEventAt');
    if (this.state.skipInactive) {
      // Skip inactivity: no interaction for more than the threshold ahead, jump to the next one
      // (or to the end of what is loaded, which then loads on).
      const next = this.interactions.find((time) => time > now) ?? loadedEnd;
      if (next - now > INACTIVITY_THRESHOLD_MS) {
        // A gap on the way is not inactivity: stop at it, and it is skipped as not recorded.
        const gapAhead = this.options.gaps.find((candidate) => candidate.from > offset);
        const nextOffset = next - this.options.startedAt;
        const to =
          gapAhead !== undefined && gapAhead.from <= nextOffset
            ? gapAhead.from
            : nextOffset - INACTIVITY_SKIP_LANDING_MS;
        if (to - offset >= INACTIVITY_SKIP_LANDING_MS) {
          this.update({ skipped: { key: `inactive:${offset}`, from: offset, to, reason: 'inactivity' } });
          void this.seek(to, true);
          return;
        }
      }
    }
    if (now + LOOKAHEAD_MS > loadedEnd) void this.appendAhead();
    if (Math.abs(offset - this.state.offset) >= 50) this.update({ offset });
  }

  play(): void {
    if (this.state.ended) {
      void this.seek(0, true);
      return;
    }
    const offset = this.state.offset;
    this.update({ playing: true, skipped: undefined });
    this.position(this.options.startedAt + offset, true);
  }

  isPlaying(): boolean {
    return this.state.playing;
  }

  pause(): void {
    const offset = this.currentOffset();
    this.replayer?.pause();
    this.update({ playing: false, offset });
  }

  setSpeed(speed: number): void {
    this.replayer?.setConfig({ speed });
    this.update({ speed });
  }

  setSkipInactive(skipInactive: boolean): void {
    this.update({ skipInactive });
  }

  /** The replayed document (the iframe rrweb renders into). */
  iframe(): HTMLIFrameElement | undefined {
    return this.replayer?.iframe;
  }
}
