/**
 * The session recorder: `@rrweb/record` with privacy by default. Its own chunk: the core
 * imports it only when recording is on.
 *
 * @packageDocumentation
 */
import { record } from '@rrweb/record';
import type { GovernorPolicy } from '../governor.ts';
import type { WireEvent } from '../session-writer.ts';

/** How much the page's content is hidden (see the README's "Privacy"). */
export interface PrivacyOptions {
  /** `strict` also ignores `unmaskClass`, masks text attributes and keeps URLs to origin and path. Default `standard`. */
  mode?: 'standard' | 'strict';
  /** Elements with this class (and their content) are recorded as they are. Default `svc-unmask`; ignored in strict mode. */
  unmaskClass?: string;
  /** Elements with this class are replaced by an empty box of their size. Default `svc-block`. */
  blockClass?: string;
  /** More elements to block, as a CSS selector (added to the media ones). */
  blockSelector?: string;
}

export type RecorderDetail = GovernorPolicy['recording'];

export interface RecorderOptions {
  emit(event: WireEvent): void;
  privacy?: PrivacyOptions;
  /** A full snapshot (checkout) this often, so a held pre-roll starts at one. Default 30 s. */
  checkoutEveryMs?: number;
  detail?: RecorderDetail;
}

export interface Recorder {
  /** Applies the governor's detail; `paused` stops recording until a higher level. */
  setDetail(detail: RecorderDetail): void;
  /** Takes a full snapshot now. */
  checkout(): void;
  stop(): void;
}

/** Media and embedded content are never recorded: they are replaced by a box of their size. */
export const BLOCKED_MEDIA = 'img,picture,video,audio,canvas,iframe,object,embed,svg image';

/** Text attributes a reader sees; masked in strict mode. */
const TEXT_ATTRIBUTES = ['placeholder', 'title', 'alt', 'aria-label', 'aria-description'];

const maskText = (text: string) => text.replace(/\S/g, '*');

/** rrweb sampling per governor detail: fewer mouse, scroll and media events as the level drops. */
const SAMPLING: Record<Exclude<RecorderDetail, 'paused'>, Record<string, unknown>> = {
  full: { mousemove: 50, scroll: 150, media: 800, input: 'all' },
  reduced: { mousemove: false, scroll: 500, media: 2000, input: 'last' },
  minimal: { mousemove: false, mouseInteraction: false, scroll: 2000, media: false, input: 'last' },
};

type Serialized = { attributes?: Record<string, unknown>; childNodes?: Serialized[] };

/** Masks the text attributes of serialized nodes and attribute mutations (strict mode). */
function maskAttributes(node: Serialized | undefined): void {
  if (node === undefined || node === null) return;
  const attributes = node.attributes;
  if (attributes !== undefined && attributes !== null)
    for (const name of TEXT_ATTRIBUTES) {
      const value = attributes[name];
      if (typeof value === 'string') attributes[name] = maskText(value);
    }
  for (const child of node.childNodes ?? []) maskAttributes(child);
}

/** rrweb's Meta event, which carries the page's URL. */
const META = 4;

function maskEventAttributes(event: { type: number; data?: unknown }): void {
  const data = event.data as
    | { href?: string; node?: Serialized; adds?: { node: Serialized }[]; attributes?: Serialized[] }
    | undefined;
  if (data === undefined) return;
  // Strict mode keeps URLs to origin and path, as it does for `meta` and `nav`.
  if (event.type === META && typeof data.href === 'string') data.href = data.href.replace(/[?#].*$/s, '');
  maskAttributes(data.node);
  for (const added of data.adds ?? []) maskAttributes(added.node);
  for (const changed of data.attributes ?? []) maskAttributes(changed);
}

/**
 * Starts `@rrweb/record` with privacy by default: every text node and every input value is
 * masked (`*` for each character; passwords always), media and embedded content are blocked,
 * canvas, fonts and images are not captured. `unmaskClass` opts an element's subtree back in
 * (never in strict mode; passwords stay masked).
 *
 * @example
 * ```ts
 * const recorder = startRecorder({ emit: gate.push, privacy: { mode: 'strict' } });
 * recorder.setDetail('reduced');
 * ```
 */
export function startRecorder(options: RecorderOptions): Recorder {
  const privacy = options.privacy ?? {};
  const strict = privacy.mode === 'strict';
  const unmaskSelector = strict ? undefined : `.${privacy.unmaskClass ?? 'svc-unmask'}`;
  const unmasked = (element: HTMLElement | null) =>
    unmaskSelector !== undefined && element?.closest(unmaskSelector) != null;
  const blockSelector =
    privacy.blockSelector === undefined ? BLOCKED_MEDIA : `${BLOCKED_MEDIA},${privacy.blockSelector}`;

  let stopRecording: (() => void) | undefined;
  let detail: RecorderDetail = options.detail ?? 'full';
  let pausedAt = Date.now();

  const start = () => {
    if (detail === 'paused') return;
    stopRecording = record({
      emit(event) {
        if (strict) maskEventAttributes(event as { type: number; data?: unknown });
        // What insights need and rrweb does not record, as fields its replayer ignores (numbers
        // only): the document's height (`dh`) on Meta and scroll events (`source` 3: only
        // incremental snapshots have one), for scroll depth; a click's position within its
        // target (`ox`, `oy`: fractions of its width and height; source 2, type 2), for heatmaps
        // on elements of any size.
        const data = event.data as unknown as Record<string, number>;
        if (event.type === META || data.source === 3) data.dh = document.documentElement.scrollHeight;
        else if (data.source === 2 && data.type === 2) {
          const box = (record.mirror.getNode(data.id as number) as Element | null)?.getBoundingClientRect();
          if (box) {
            data.ox = ((data.x as number) - box.x) / box.width;
            data.oy = ((data.y as number) - box.y) / box.height;
          }
        }
        options.emit({ t: event.timestamp, type: 'rrweb', data: event });
      },
      checkoutEveryNms: options.checkoutEveryMs ?? 30_000,
      maskAllInputs: true,
      maskInputOptions: { password: true },
      maskInputFn: (text, element) =>
        unmasked(element) && (element as HTMLInputElement).type !== 'password'
          ? text
          : '*'.repeat(text.length),
      maskTextSelector: '*',
      maskTextFn: (text, element) => (unmasked(element) ? text : maskText(text)),
      blockClass: privacy.blockClass ?? 'svc-block',
      blockSelector,
      recordCanvas: false,
      collectFonts: false,
      inlineImages: false,
      slimDOMOptions: 'all',
      sampling: SAMPLING[detail],
    });
  };
  start();

  return {
    setDetail(next) {
      if (next === detail) return;
      stopRecording?.();
      stopRecording = undefined;
      // Survival pauses the replay; the resumed recording declares what it did not record.
      if (next === 'paused') pausedAt = Date.now();
      else if (detail === 'paused')
        options.emit({ t: pausedAt, type: 'gap', fromT: pausedAt, toT: Date.now(), reason: 'survival' });
      detail = next;
      start();
    },
    checkout() {
      if (stopRecording !== undefined) record.takeFullSnapshot(true);
    },
    stop() {
      stopRecording?.();
      stopRecording = undefined;
    },
  };
}
