import type { ChunkManifestEntry, FlatEvent, SessionDetail, SessionIssue, WireEvent } from './types.ts';

// What the timeline shows, in milliseconds from the session's start: the markers (navigation,
// clicks, errors, custom events, network requests, call events, findings) and the gaps, where
// nothing was recorded.

export type MarkerKind =
  | 'nav'
  | 'click'
  | 'error'
  | 'custom'
  | 'request'
  | 'failed_request'
  | 'call'
  | 'trigger'
  | 'finding';

/** A point of the session worth jumping to. */
export interface Marker {
  /** Unique within the session: `seq:index` of the event, or the finding's own key. */
  key: string;
  kind: MarkerKind;
  /** Milliseconds from the session's start. */
  offset: number;
  label: string;
}

/** A stretch of the session that was not recorded, and why. */
export interface Gap {
  key: string;
  /** Milliseconds from the session's start. */
  from: number;
  to: number;
  reason: string;
}

export const MARKER_NAMES: Record<MarkerKind, string> = {
  nav: 'Navigation',
  click: 'Click',
  error: 'Error',
  custom: 'Custom event',
  request: 'Request',
  failed_request: 'Failed request',
  call: 'Call event',
  trigger: 'Recording trigger',
  finding: 'Finding',
};

/** The event types of `GET /v1/sessions/{id}/events?types=` the timeline marks. */
export const MARKED_EVENT_TYPES = ['nav', 'error', 'custom', 'request', 'call.event', 'trigger'];

/** Why the SDK reported a gap (`gap.reason` of the protocol), in words. */
const SDK_GAP_REASONS: Record<string, string> = {
  hidden: 'the tab was in the background',
  offline: 'the device was offline',
  survival: 'the recorder paused to protect the page (survival mode)',
  monitor: 'monitor mode kept only the moments around triggers',
  overflow: 'the recorder’s buffer overflowed',
};

/** rrweb: an incremental snapshot (3) of a mouse interaction (source 2) that is a click (2). */
export function isClick(event: WireEvent): boolean {
  const data = event.data as { type?: number; data?: { source?: number; type?: number } } | undefined;
  return data?.type === 3 && data.data?.source === 2 && data.data.type === 2;
}

function text(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}

/** The marker of one event of the session, or undefined for events the timeline does not mark. */
export function markerOf(event: WireEvent, seq: number, index: number, start: number): Marker | undefined {
  const key = `${seq}:${index}`;
  const offset = Math.max(0, event.t - start);
  switch (event.type) {
    case 'nav':
      return { key, kind: 'nav', offset, label: text(event.url) ?? 'Navigation' };
    case 'error':
      return {
        key,
        kind: 'error',
        offset,
        label: [text(event.name), text(event.message)].filter(Boolean).join(': ') || 'Error',
      };
    case 'custom':
      return { key, kind: 'custom', offset, label: text(event.name) ?? 'Custom event' };
    case 'request': {
      // A request failed when it got no answer or an error status (4xx, 5xx).
      const status = typeof event.status === 'number' ? event.status : undefined;
      const outcome = status ?? text(event.failure) ?? 'no answer';
      const duration = typeof event.durationMs === 'number' ? ` in ${event.durationMs} ms` : '';
      return {
        key,
        kind: status === undefined || status >= 400 ? 'failed_request' : 'request',
        offset,
        label: `${text(event.method) ?? 'GET'} ${text(event.url) ?? ''} → ${outcome}${duration}`,
      };
    }
    case 'call.event':
      return { key, kind: 'call', offset, label: text(event.name) ?? 'Call event' };
    case 'trigger':
      return { key, kind: 'trigger', offset, label: text(event.name) ?? 'Trigger' };
    case 'rrweb':
      return isClick(event) ? { key, kind: 'click', offset, label: 'Click' } : undefined;
    default:
      return undefined;
  }
}

/** The markers of the events of `GET /v1/sessions/{id}/events`. */
export function markersOfEvents(events: FlatEvent[], start: number): Marker[] {
  return events.flatMap((item) => markerOf(item.event, item.seq, item.index, start) ?? []);
}

/** The markers of the session's detector findings (`GET /v1/sessions/{id}/issues`). */
export function markersOfFindings(issues: SessionIssue[], start: number): Marker[] {
  return issues
    .filter((issue) => issue.kind === 'finding')
    .map((issue, index) => ({
      key: `finding:${index}`,
      kind: 'finding' as const,
      offset: Math.max(0, Date.parse(issue.t) - start),
      label: issue.name,
    }));
}

/** At the same time, a click comes before what it caused (an error, a navigation…). */
const ORDER: Record<MarkerKind, number> = {
  click: 0,
  nav: 1,
  custom: 2,
  request: 3,
  failed_request: 4,
  call: 5,
  trigger: 6,
  error: 7,
  finding: 8,
};

/** Markers of several sources in time order, each event once. */
export function mergeMarkers(...lists: Marker[][]): Marker[] {
  const byKey = new Map<string, Marker>();
  for (const list of lists) for (const marker of list) byKey.set(marker.key, marker);
  return [...byKey.values()].sort(
    (left, right) => left.offset - right.offset || ORDER[left.kind] - ORDER[right.kind],
  );
}

/** rrweb: an incremental snapshot (3) of what a person does (mouse, scroll, resize, input: sources 1-5). */
export function isInteraction(event: WireEvent): boolean {
  const data = event.data as { type?: number; data?: { source?: number } } | undefined;
  const source = data?.data?.source;
  return data?.type === 3 && typeof source === 'number' && source >= 1 && source <= 5;
}

function chunkTime(chunk: ChunkManifestEntry | undefined, field: 'firstEventAt' | 'lastEventAt') {
  const value = chunk?.[field];
  return value === undefined ? undefined : Date.parse(value);
}

/**
 * The session's gaps on its timeline: chunks that never arrived (from the end of the chunk before
 * to the start of the chunk after) and the gaps the SDK reported, in time order.
 */
export function gapsOf(detail: SessionDetail): Gap[] {
  const start = Date.parse(detail.startedAt);
  const end = start + detail.durationMs;
  const bySeq = new Map(detail.chunks.map((chunk) => [chunk.seq, chunk]));
  const gaps = detail.gaps.map((gap): Gap => {
    if (gap.kind === 'sdk') {
      const reason = SDK_GAP_REASONS[gap.reason] ?? gap.reason;
      return {
        key: `sdk:${gap.fromT}`,
        from: Date.parse(gap.fromT) - start,
        to: Date.parse(gap.toT) - start,
        reason,
      };
    }
    const before = chunkTime(bySeq.get(gap.fromSeq - 1), 'lastEventAt') ?? start;
    const after = chunkTime(bySeq.get(gap.toSeq + 1), 'firstEventAt') ?? end;
    const chunks = gap.fromSeq === gap.toSeq ? `chunk ${gap.fromSeq}` : `chunks ${gap.fromSeq}–${gap.toSeq}`;
    return {
      key: `missing:${gap.fromSeq}`,
      from: before - start,
      to: after - start,
      reason: `${chunks} of the recording never arrived`,
    };
  });
  return gaps
    .map((gap) => ({ ...gap, from: Math.max(0, gap.from), to: Math.min(end - start, gap.to) }))
    .filter((gap) => gap.to > gap.from)
    .sort((left, right) => left.from - right.from);
}

/** The gap `offset` falls in, if any. */
export function gapAt(gaps: Gap[], offset: number): Gap | undefined {
  return gaps.find((gap) => offset >= gap.from && offset < gap.to);
}

/** The last marker at or before `offset` (the event list's current row). */
export function currentMarker(markers: Marker[], offset: number): Marker | undefined {
  let current: Marker | undefined;
  for (const marker of markers) {
    if (marker.offset > offset) break;
    current = marker;
  }
  return current;
}
