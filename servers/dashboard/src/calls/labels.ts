// Words for what the calls API answers in identifiers: detector kinds, metrics, event markers.

import { detectorKindLabel } from '../ui/detector-kinds.ts';

/** A finding's title: its detector's kind in words. */
export function findingTitle(kind: string): string {
  return detectorKindLabel(kind);
}

/** `sustainedMs` → `sustained` (the value carries the unit): an evidence field's name in words. */
export function evidenceLabel(name: string): string {
  return name
    .replace(/(.)(Ms|Pct)$/, '$1')
    .replace(/([a-z])([A-Z])/g, '$1 $2')
    .toLowerCase();
}

export function formatEvidence(name: string, value: number | string | boolean): string {
  if (typeof value === 'boolean') return value ? 'yes' : 'no';
  if (typeof value !== 'number') return value;
  const number = Number.isInteger(value) ? String(value) : value.toFixed(2);
  if (/Ms$/.test(name)) return `${number} ms`;
  if (/Pct$/.test(name)) return `${number} %`;
  return number;
}

export function trackLabel(track: { kind: string; dir: string }): string {
  const kind = track.kind === 'audio' ? 'Audio' : track.kind === 'video' ? 'Video' : track.kind;
  const direction = track.dir === 'in' ? 'inbound' : track.dir === 'out' ? 'outbound' : track.dir;
  return `${kind}, ${direction}`;
}

/** One chart of a track: its title, unit and the series it draws (the first is the main one). */
export interface MetricChart {
  id: string;
  title: string;
  unit: string;
  lines: Array<{ key: string; label: string }>;
}

/**
 * The charts a track can have, in the order they are shown; a track gets those whose series it
 * carries with at least one number.
 */
export const METRIC_CHARTS: MetricChart[] = [
  { id: 'loss', title: 'Packet loss', unit: '%', lines: [{ key: 'lossPct', label: 'loss' }] },
  { id: 'rtt', title: 'Round-trip time', unit: 'ms', lines: [{ key: 'rttMs', label: 'RTT' }] },
  { id: 'jitter', title: 'Jitter', unit: 'ms', lines: [{ key: 'jitterMs', label: 'jitter' }] },
  {
    id: 'jitter-buffer',
    title: 'Jitter buffer delay',
    unit: 'ms',
    lines: [{ key: 'jitterBufferMs', label: 'jitter buffer delay' }],
  },
  { id: 'fps', title: 'Frame rate', unit: 'fps', lines: [{ key: 'fps', label: 'frames per second' }] },
  {
    id: 'resolution',
    title: 'Resolution',
    unit: 'px',
    lines: [
      { key: 'h', label: 'height' },
      { key: 'w', label: 'width' },
    ],
  },
  {
    id: 'bitrate',
    title: 'Bitrate',
    unit: 'kbps',
    lines: [
      { key: 'kbps', label: 'bitrate' },
      { key: 'availableOutgoingKbps', label: 'available outgoing' },
      { key: 'availableIncomingKbps', label: 'available incoming' },
    ],
  },
  {
    id: 'concealment',
    title: 'Concealment',
    unit: '%',
    lines: [{ key: 'concealmentPct', label: 'concealed samples' }],
  },
  {
    id: 'freezes',
    title: 'Freezes',
    unit: 'ms',
    lines: [
      { key: 'freezeMs', label: 'time frozen' },
      { key: 'maxFreezeMs', label: 'longest freeze' },
    ],
  },
  {
    id: 'quality-limitation',
    title: 'Quality limitation',
    unit: '% of window',
    lines: [
      { key: 'limitedByBandwidthPct', label: 'limited by bandwidth' },
      { key: 'limitedByCpuPct', label: 'limited by CPU' },
    ],
  },
];

/** The call's events drawn on the charts as vertical lines, with their legend's words and look. */
export interface MarkerKind {
  id: string;
  label: string;
  color: string;
  /** Canvas line dash, so the kinds differ by more than colour. */
  dash: number[];
  matches: (name: string) => boolean;
}

export const MARKER_KINDS: MarkerKind[] = [
  {
    id: 'connection',
    label: 'Connection state change',
    color: '#1a56b8',
    dash: [],
    matches: (name) => name === 'connection_state',
  },
  {
    id: 'path',
    label: 'Path change (candidate pair)',
    color: '#7a3db8',
    dash: [6, 3],
    matches: (name) => name === 'candidate_pair_change',
  },
  {
    id: 'ice-restart',
    label: 'ICE restart',
    color: '#a3141d',
    dash: [2, 2],
    matches: (name) => name === 'ice_restart',
  },
  {
    id: 'mute',
    label: 'Mute, unmute or track end',
    color: '#8a5a00',
    dash: [8, 2, 2, 2],
    matches: (name) => name === 'track_muted' || name === 'track_unmuted' || name === 'track_ended',
  },
  {
    id: 'media-change',
    label: 'Codec or resolution change',
    color: '#0b7a4b',
    dash: [1, 3],
    matches: (name) => name === 'codec_change' || name === 'resolution_change',
  },
];

export function markerKindOf(name: string): MarkerKind | undefined {
  return MARKER_KINDS.find((kind) => kind.matches(name));
}

/** An event in words: `connection_state` `{ state: 'connected', prev: 'connecting' }` → `connection state: connected (was connecting)`. */
export function describeEvent(event: { name: string; [field: string]: unknown }): string {
  const name = event.name.replaceAll('_', ' ');
  const field = (key: string) => (event[key] === undefined ? undefined : String(event[key]));
  switch (event.name) {
    case 'connection_state':
    case 'ice_state':
    case 'ice_gathering':
    case 'signaling_state':
      return `${name}: ${field('state')}${field('prev') === undefined ? '' : ` (was ${field('prev')})`}`;
    case 'candidate_pair_change':
      return `${name}: ${field('localType')} → ${field('remoteType')} over ${field('protocol')}${event.relayed === true ? ', relayed' : ''}${event.initial === true ? ' (first pair)' : ''}`;
    case 'track_added':
    case 'track_muted':
    case 'track_unmuted':
    case 'track_ended':
      return `${name}: ${field('kind')} ${field('dir') === 'in' ? 'inbound' : 'outbound'} (${field('track')})`;
    case 'codec_change':
      return `${name}: ${field('prev')} → ${field('codec')} (${field('track')})`;
    case 'resolution_change':
      return `${name}: ${field('prevW')}×${field('prevH')} → ${field('w')}×${field('h')} (${field('track')})`;
    case 'ice_candidate_error':
      return `${name}: ${field('errorCode')}${field('errorText') === undefined ? '' : ` ${field('errorText')}`}`;
    case 'pc_closed':
      return `${name} after ${field('durationMs')} ms`;
    default:
      return name;
  }
}
