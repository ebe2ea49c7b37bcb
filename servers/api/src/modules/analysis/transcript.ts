// A session's transcript: a compact text timeline of what happened (servers/api/README.md,
// Transcripts). Every entry carries an evidence id (`<seq>.<index>` of its event, `finding:<pc>:<kind>`
// of a detector finding, `call:<id>` of a call) that explanations and a model's prose quote. Pure:
// the items come from timeline.ts, the rows from the database (transcript-source.ts).

import { parseStackFrames } from '../issues/index.ts';
import type { ElementDescription } from './elements.ts';
import type { TimelineItem } from './timeline.ts';

/** Most entries a transcript holds; a longer session says where it was cut. */
const MAX_TRANSCRIPT_ENTRIES = 5_000;
/** Evidence ids kept of the repeats folded into one entry. */
const MAX_FOLDED_IDS = 20;
/** Frames told per error. */
const FRAMES_PER_ERROR = 3;

/** A frame of an error as processing stored it (`details.frames`), or as parsed from its stack. */
export interface TranscriptFrame {
  function?: string;
  file?: string;
  line?: number;
  column?: number;
  /** From the project's source maps. */
  mapped?: boolean;
}

/** A call of the session, as its row says. */
export interface TranscriptCall {
  id: string;
  pc: string;
  startedAt: number;
  qualityScore: number | null;
  setupMs: number | null;
  relayed: boolean;
  networkType: string | null;
  /** The selected path's transport (`udp`, `tcp`, `tls`). */
  protocol: string | null;
  failedToConnect: boolean;
  failureReason: string | null;
  durationMs: number | null;
}

/** A detector finding of the session. */
export interface TranscriptFinding {
  pc: string;
  kind: string;
  severity: string;
  t: number;
  track: string | null;
  callId: string | null;
  evidence: Record<string, unknown>;
}

/** What a transcript is made of besides the timeline: the session's row and processed results. */
export interface TranscriptSources {
  session: {
    id: string;
    startedAt: number;
    durationMs: number;
    url: string | null;
    browserName: string | null;
    browserVersion: string | null;
    osName: string | null;
    osVersion: string | null;
    device: string | null;
    viewportWidth: number | null;
    viewportHeight: number | null;
    release: string | null;
    environment: string | null;
    userId: string | null;
    recordingMode: string | null;
  };
  items: readonly TimelineItem[];
  /** Errors' stored frames (symbolicated where a map matched), by evidence id. */
  errorFrames: ReadonlyMap<string, readonly TranscriptFrame[]>;
  calls: readonly TranscriptCall[];
  findings: readonly TranscriptFinding[];
  /** Sequence numbers never received. */
  missing: ReadonlyArray<{ fromSeq: number; toSeq: number }>;
}

/** The kinds of entries. */
type TranscriptEntryKind = TimelineItem['kind'] | 'call_summary' | 'finding';

/** One line of a transcript. */
interface TranscriptEntry {
  /** The evidence id. */
  id: string;
  kind: TranscriptEntryKind;
  /** Milliseconds since the session started. */
  offsetMs: number;
  t: string;
  text: string;
  /** Lines told under it (an error's frames). */
  details?: string[];
  /** How many times in a row it happened (absent: once). */
  repeat?: number;
  /** The evidence ids of the repeats folded into it (the first 20). */
  repeatIds?: string[];
}

/** A session's transcript. */
export interface Transcript {
  sessionId: string;
  startedAt: string;
  durationMs: number;
  /** What the session is: browser, release, user, counts, gaps. */
  header: string[];
  entries: TranscriptEntry[];
  /** More than {@link MAX_TRANSCRIPT_ENTRIES} entries: the rest is left out. */
  truncated: boolean;
  /** The header and the entries as text, one line each (`mm:ss [id] text`). */
  text: string;
}

/** `1 h 02 min`, `12 min 31 s`, `4.2 s`, `310 ms`. */
export function formatDuration(ms: number): string {
  if (!Number.isFinite(ms) || ms < 0) return 'an unknown time';
  if (ms < 1_000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(Math.round(ms / 100) / 10).toString()} s`;
  const totalSeconds = Math.round(ms / 1_000);
  const hours = Math.floor(totalSeconds / 3_600);
  const minutes = Math.floor((totalSeconds % 3_600) / 60);
  const seconds = totalSeconds % 60;
  if (hours > 0) return `${hours} h ${String(minutes).padStart(2, '0')} min`;
  return `${minutes} min ${seconds} s`;
}

/** `mm:ss`, or `h:mm:ss` from an hour on. */
export function formatOffset(ms: number): string {
  const totalSeconds = Math.max(0, Math.floor(ms / 1_000));
  const hours = Math.floor(totalSeconds / 3_600);
  const minutes = Math.floor((totalSeconds % 3_600) / 60);
  const seconds = totalSeconds % 60;
  const mmss = `${String(minutes).padStart(2, '0')}:${String(seconds).padStart(2, '0')}`;
  return hours > 0 ? `${hours}:${mmss}` : mmss;
}

/** How an element is told: `button "Pay now" (#pay)`, `textbox [masked text] (main > input.q)`. */
export function describeTarget(element: ElementDescription | null): string {
  if (element === null) return 'an element the recording does not hold';
  const what = element.role ?? element.tag;
  const name = element.name !== undefined ? ` "${element.name}"` : element.nameMasked ? ' [masked text]' : '';
  const where =
    element.testId !== undefined
      ? `[${element.testId.attribute}="${element.testId.value}"]`
      : element.stableId !== undefined
        ? `#${element.stableId}`
        : element.selector;
  return `${what}${name}${where === null ? '' : ` (${where})`}`;
}

/** A URL's origin, or undefined when it has none. */
export function originOf(url: string | null): string | undefined {
  if (url === null) return undefined;
  try {
    return new URL(url).origin;
  } catch {
    return undefined;
  }
}

/** A URL as told: its path (and allowed query) on the session's own origin, else whole. */
function shortUrl(url: string, origin: string | undefined): string {
  try {
    const parsed = new URL(url);
    return parsed.origin === origin ? `${parsed.pathname}${parsed.search}` : url;
  } catch {
    return url;
  }
}

function formatFrame(frame: TranscriptFrame): string {
  const place =
    frame.file === undefined
      ? '?'
      : `${frame.file}${frame.line === undefined ? '' : `:${frame.line}${frame.column === undefined ? '' : `:${frame.column}`}`}`;
  return `at ${frame.function ?? '<anonymous>'} (${place})${frame.mapped === true ? ' [source map]' : ''}`;
}

const GAP_REASONS: Record<string, string> = {
  hidden: 'the tab was hidden',
  offline: 'the device was offline',
  survival: 'the SDK saved resources',
  monitor: 'monitor mode held the replay',
  overflow: 'the recording overflowed',
};

const FAILURES: Record<string, string> = {
  network: 'no answer (network error)',
  abort: 'aborted',
  timeout: 'no answer (timeout)',
};

function formatValue(value: unknown): string {
  if (typeof value === 'number')
    return Number.isInteger(value) ? String(value) : String(Math.round(value * 100) / 100);
  if (typeof value === 'string') return value;
  return JSON.stringify(value);
}

function formatEvidence(evidence: Record<string, unknown>): string {
  return Object.entries(evidence)
    .map(([key, value]) => `${key}=${formatValue(value)}`)
    .join(', ');
}

function formatVital(name: string, value: number): string {
  return name === 'CLS' ? String(Math.round(value * 1000) / 1000) : formatDuration(value);
}

function callText(pc: string | undefined, name: string, fields: Record<string, unknown>): string {
  const call = pc === undefined ? 'Call' : `Call ${pc}`;
  const field = (key: string) => fields[key];
  switch (name) {
    case 'pc_created':
      return `${call}: peer connection created${typeof field('iceServers') === 'number' ? ` with ${field('iceServers')} ICE servers` : ''}`;
    case 'connection_state':
      return `${call}: connection ${formatValue(field('prev') ?? '?')} → ${formatValue(field('state') ?? '?')}${
        typeof field('prevMs') === 'number' ? ` after ${formatDuration(field('prevMs') as number)}` : ''
      }`;
    case 'ice_candidate_error':
      return `${call}: ICE server error ${formatValue(field('errorCode') ?? '')}${
        typeof field('errorText') === 'string' ? ` "${field('errorText')}"` : ''
      }`;
    case 'candidate_pair_change':
      return `${call}: media path ${formatValue(field('localType') ?? '?')} ↔ ${formatValue(field('remoteType') ?? '?')} over ${formatValue(
        field('protocol') ?? '?',
      )}${field('relayed') === true ? ', relayed through TURN' : ', direct'}${field('initial') === true ? ' (first path)' : ''}`;
    case 'ice_restart':
      return `${call}: ICE restart`;
    case 'media_acquired': {
      const size =
        typeof field('w') === 'number' && typeof field('h') === 'number'
          ? ` ${field('w')}×${field('h')}`
          : '';
      const fps = typeof field('fps') === 'number' ? ` at ${formatValue(field('fps'))} fps` : '';
      return `Captured ${formatValue(field('kind') ?? 'media')}${size}${fps}`;
    }
    case 'media_error':
      return `Could not capture ${formatValue(field('kind') ?? 'media')}: ${formatValue(field('errorName') ?? 'error')} (${formatValue(
        field('class') ?? 'unknown',
      )})`;
    case 'track_unmuted':
      return `${call}: ${formatValue(field('kind') ?? '')} track ${formatValue(field('track') ?? '')} resumed after a ${formatDuration(
        field('freezeMs') as number,
      )} freeze`;
    case 'device_change':
      return `Devices changed: ${formatValue(field('audioinput') ?? 0)} microphones, ${formatValue(field('videoinput') ?? 0)} cameras, ${formatValue(
        field('audiooutput') ?? 0,
      )} speakers`;
    case 'pc_closed':
      return `${call}: closed${typeof field('durationMs') === 'number' ? ` after ${formatDuration(field('durationMs') as number)}` : ''}`;
    default:
      return `${call}: ${name}`;
  }
}

/** An entry's text (and the lines under it) for a timeline item. */
function itemText(
  item: TimelineItem,
  origin: string | undefined,
  errorFrames: ReadonlyMap<string, readonly TranscriptFrame[]>,
): { text: string; details?: string[] } {
  switch (item.kind) {
    case 'page':
      return {
        text: `${item.load ? 'Opened' : 'Went to'} ${shortUrl(item.url, origin)} (route ${item.route})`,
      };
    case 'click':
      return {
        text: `Clicked ${describeTarget(item.element)}${item.dead === true ? '; nothing happened (dead click)' : ''}`,
      };
    case 'rage_click':
      return {
        text: `Rage-clicked ${describeTarget(item.element)}: ${item.count} clicks in ${formatDuration(item.endT - item.t)}`,
      };
    case 'input':
      if (item.value.kind === 'checked')
        return { text: `${item.value.checked ? 'Checked' : 'Unchecked'} ${describeTarget(item.element)}` };
      return {
        text: `${item.element?.fieldType === 'select' ? 'Chose an option in' : 'Typed into'} ${describeTarget(item.element)} (value not recorded)`,
      };
    case 'error': {
      const stored = errorFrames.get(item.id);
      const frames: TranscriptFrame[] =
        stored !== undefined && stored.length > 0
          ? [...stored]
          : item.stack === undefined
            ? []
            : parseStackFrames(item.stack);
      return {
        text: `Error ${item.name}${item.message === undefined ? '' : `: ${item.message}`}${
          item.source === undefined ? '' : ` (${item.source})`
        }`,
        ...(frames.length === 0 ? {} : { details: frames.slice(0, FRAMES_PER_ERROR).map(formatFrame) }),
      };
    }
    case 'request': {
      const outcome =
        item.failure !== undefined
          ? (FAILURES[item.failure] ?? item.failure)
          : item.status === undefined
            ? 'no answer'
            : `HTTP ${item.status}`;
      return {
        text: `Request ${item.method} ${shortUrl(item.url, origin)} failed: ${outcome}${
          item.durationMs === undefined ? '' : ` after ${formatDuration(item.durationMs)}`
        }`,
      };
    }
    case 'custom': {
      const props =
        item.props === undefined || Object.keys(item.props).length === 0
          ? ''
          : ` ${JSON.stringify(item.props)}`;
      return {
        text: `Event "${item.name}"${props}${item.severity === undefined ? '' : ` (${item.severity})`}`,
      };
    }
    case 'vital':
      return {
        text: `${item.name} ${formatVital(item.name, item.value)}${item.rating === undefined ? '' : ` (${item.rating})`}`,
      };
    case 'identify':
      return { text: `Identified the user${item.userId === undefined ? '' : ` ${item.userId}`}` };
    case 'trigger':
      return { text: `Recording kept by the trigger ${item.name}` };
    case 'gap':
      return {
        text: `Nothing recorded for ${formatDuration(item.toT - item.t)}: ${GAP_REASONS[item.reason] ?? item.reason}`,
      };
    case 'call':
      return { text: callText(item.pc, item.name, item.fields) };
  }
}

function callSummaryText(call: TranscriptCall): string {
  const parts: string[] = [];
  parts.push(call.qualityScore === null ? 'no quality score' : `quality ${call.qualityScore}/100`);
  if (call.failedToConnect)
    parts.push(`never connected${call.failureReason === null ? '' : ` (${call.failureReason})`}`);
  else if (call.setupMs !== null) parts.push(`connected in ${formatDuration(call.setupMs)}`);
  parts.push(call.relayed ? 'relayed through TURN' : 'direct path');
  if (call.networkType !== null) parts.push(`network ${call.networkType}`);
  if (call.durationMs !== null) parts.push(`lasted ${formatDuration(call.durationMs)}`);
  return `Call ${call.pc} (${call.id}): ${parts.join(', ')}`;
}

function findingText(finding: TranscriptFinding): string {
  const evidence = formatEvidence(finding.evidence);
  return `Finding ${finding.kind} (${finding.severity})${finding.pc === '' ? '' : ` in call ${finding.pc}`}${
    finding.track === null ? '' : ` on track ${finding.track}`
  }${evidence === '' ? '' : `: ${evidence}`}`;
}

function headerOf(sources: TranscriptSources, entries: readonly TranscriptEntry[]): string[] {
  const { session } = sources;
  const lines = [
    `Session ${session.id}, started ${new Date(session.startedAt).toISOString()}, lasted ${formatDuration(session.durationMs)}`,
  ];
  const browser = [session.browserName, session.browserVersion].filter((part) => part !== null).join(' ');
  const os = [session.osName, session.osVersion].filter((part) => part !== null).join(' ');
  const facts = [
    browser === '' ? undefined : `${browser}${os === '' ? '' : ` on ${os}`}`,
    session.device ?? undefined,
    session.viewportWidth === null || session.viewportHeight === null
      ? undefined
      : `viewport ${session.viewportWidth}×${session.viewportHeight}`,
    session.release === null ? undefined : `release ${session.release}`,
    session.environment === null ? undefined : `environment ${session.environment}`,
    session.recordingMode === null ? undefined : `recording ${session.recordingMode}`,
  ].filter((fact): fact is string => fact !== undefined);
  if (facts.length > 0) lines.push(facts.join('; '));
  if (session.userId !== null) lines.push(`User ${session.userId}`);
  const count = (kind: TranscriptEntryKind) =>
    entries.filter((entry) => entry.kind === kind).reduce((sum, entry) => sum + (entry.repeat ?? 1), 0);
  const clicks = sources.items.reduce(
    (sum, item) => sum + (item.kind === 'click' ? 1 : item.kind === 'rage_click' ? item.count : 0),
    0,
  );
  const counts = [
    [count('page'), 'page'],
    [clicks, 'click'],
    [count('rage_click'), 'rage click'],
    [
      entries.filter((entry) => entry.kind === 'click' && entry.text.endsWith('(dead click)')).length,
      'dead click',
    ],
    [count('input'), 'field typed into'],
    [count('error'), 'error'],
    [count('request'), 'failed request'],
    [sources.calls.length, 'call'],
    [sources.findings.length, 'finding'],
  ] as const;
  const told = counts
    .filter(([value]) => value > 0)
    .map(
      ([value, noun]) =>
        `${value} ${noun === 'field typed into' ? (value === 1 ? 'field typed into' : 'fields typed into') : value === 1 ? noun : `${noun}s`}`,
    );
  lines.push(told.length === 0 ? 'Nothing happened that a transcript tells' : told.join(', '));
  if (sources.missing.length > 0) {
    lines.push(
      `Missing data: ${sources.missing
        .map((gap) =>
          gap.fromSeq === gap.toSeq ? `chunk ${gap.fromSeq}` : `chunks ${gap.fromSeq}–${gap.toSeq}`,
        )
        .join(', ')} never arrived`,
    );
  }
  return lines;
}

/**
 * The transcript of a session from its timeline and its processed results: entries in time order
 * (calls at their start, findings when they fired), repeats in a row folded into one entry, at most
 * {@link MAX_TRANSCRIPT_ENTRIES}. Masked text stays masked; typed values are never told.
 *
 * @example
 * ```ts
 * const transcript = buildTranscript({ session, items, errorFrames: new Map(), calls: [], findings: [], missing: [] });
 * transcript.text; // 'Session ses_…\n…\n00:01 [0.4] Clicked button "Pay now" (#pay)'
 * ```
 */
export function buildTranscript(sources: TranscriptSources): Transcript {
  const { session } = sources;
  const origin = originOf(session.url);
  const raw: Array<Omit<TranscriptEntry, 'offsetMs' | 't'> & { at: number }> = [];
  for (const item of sources.items)
    raw.push({ id: item.id, kind: item.kind, at: item.t, ...itemText(item, origin, sources.errorFrames) });
  for (const call of sources.calls)
    raw.push({
      id: `call:${call.id}`,
      kind: 'call_summary',
      at: call.startedAt,
      text: callSummaryText(call),
    });
  for (const finding of sources.findings) {
    raw.push({
      id: `finding:${finding.pc}:${finding.kind}`,
      kind: 'finding',
      at: finding.t,
      text: findingText(finding),
    });
  }
  const ordered = raw.map((entry, order) => ({ entry, order }));
  ordered.sort((a, b) => a.entry.at - b.entry.at || a.order - b.order);

  const entries: TranscriptEntry[] = [];
  let truncated = false;
  for (const { entry } of ordered) {
    const previous = entries.at(-1);
    if (
      previous !== undefined &&
      previous.kind === entry.kind &&
      previous.text === entry.text &&
      previous.details === undefined &&
      entry.details === undefined
    ) {
      previous.repeat = (previous.repeat ?? 1) + 1;
      previous.repeatIds ??= [];
      if (previous.repeatIds.length < MAX_FOLDED_IDS) previous.repeatIds.push(entry.id);
      continue;
    }
    if (entries.length === MAX_TRANSCRIPT_ENTRIES) {
      truncated = true;
      break;
    }
    const { at, ...rest } = entry;
    entries.push({ ...rest, offsetMs: Math.max(0, at - session.startedAt), t: new Date(at).toISOString() });
  }
  const header = headerOf(sources, entries);
  const lines = [...header, ''];
  for (const entry of entries) {
    lines.push(
      `${formatOffset(entry.offsetMs)} [${entry.id}] ${entry.text}${entry.repeat === undefined ? '' : ` (×${entry.repeat})`}`,
    );
    for (const detail of entry.details ?? []) lines.push(`      ${detail}`);
  }
  if (truncated) lines.push(`… cut after ${MAX_TRANSCRIPT_ENTRIES} entries`);
  return {
    sessionId: session.id,
    startedAt: new Date(session.startedAt).toISOString(),
    durationMs: session.durationMs,
    header,
    entries,
    truncated,
    text: lines.join('\n'),
  };
}
