import type { Finding } from './types.ts';

/*
 * Canonical orders. Items with the same `t` form a batch that is evaluated in one canonical
 * order, whatever order they arrived in; findings are returned in one canonical order so ports
 * can compare arrays directly. Strings compare by UTF-16 code unit (identifiers are ASCII).
 */

function compareStrings(left: string, right: string): number {
  return left < right ? -1 : left > right ? 1 : 0;
}

/**
 * JSON with object keys sorted (code-unit order), the last tie-breaker between two items of one
 * batch. Values JSON cannot carry serialize as JSON.stringify does (`NaN` and infinities as
 * `null`, `undefined` members dropped): the detectors treat all of them as missing, so items
 * that serialize alike are processed alike.
 */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) {
    return `[${value.map((element) => (element === undefined ? 'null' : canonicalJson(element))).join(',')}]`;
  }
  if (typeof value === 'object' && value !== null) {
    const record = value as Record<string, unknown>;
    const members: string[] = [];
    for (const key of Object.keys(record).sort(compareStrings)) {
      const member = record[key];
      if (member === undefined || typeof member === 'function' || typeof member === 'symbol') continue;
      members.push(`${JSON.stringify(key)}:${canonicalJson(member)}`);
    }
    return `{${members.join(',')}}`;
  }
  if (typeof value === 'bigint') return JSON.stringify(value.toString());
  return JSON.stringify(value) ?? 'null';
}

const TRACK_EVENTS = new Set(['track_added', 'track_muted', 'track_unmuted', 'track_ended']);

/**
 * The phase of an item within its batch: `pc_created`; the other events; `call.sample`; the
 * `track_*` events (a sample at `t` describes the window that ends at `t`, before a mute or
 * unmute at `t` took effect); `pc_closed` last (it sees the samples of its own `t`).
 */
function phase(item: Record<string, unknown>): number {
  if (item.type === 'call.sample') return 2;
  const name = item.name;
  if (name === 'pc_created') return 0;
  if (name === 'pc_closed') return 4;
  return typeof name === 'string' && TRACK_EVENTS.has(name) ? 3 : 1;
}

function text(value: unknown): string {
  return typeof value === 'string' ? value : '';
}

interface SortKey {
  readonly item: object;
  readonly phase: number;
  readonly pc: string;
  readonly name: string;
  readonly track: string;
  json?: string;
}

function sortKey(item: object): SortKey {
  const record = item as Record<string, unknown>;
  return {
    item,
    phase: phase(record),
    pc: text(record.pc),
    name: text(record.name),
    track: text(record.track),
  };
}

function compareKeys(left: SortKey, right: SortKey): number {
  if (left.phase !== right.phase) return left.phase - right.phase;
  const byPc = compareStrings(left.pc, right.pc);
  if (byPc !== 0) return byPc;
  const byName = compareStrings(left.name, right.name);
  if (byName !== 0) return byName;
  const byTrack = compareStrings(left.track, right.track);
  if (byTrack !== 0) return byTrack;
  left.json ??= canonicalJson(left.item);
  right.json ??= canonicalJson(right.item);
  return compareStrings(left.json, right.json);
}

/**
 * Sorts the items of one batch (equal `t`) into their canonical processing order: by phase
 * (`pc_created`, other events, `call.sample`, `track_*` events, `pc_closed`), then `pc`, event `name`, event
 * `track`, and finally the canonical JSON of the item. Items equal under this order are equal as
 * JSON, so the order they arrived in cannot matter.
 */
export function sortBatch<Item extends object>(items: Item[]): Item[] {
  if (items.length < 2) return items;
  return items
    .map(sortKey)
    .sort(compareKeys)
    .map((key) => key.item as Item);
}

/**
 * The canonical order of findings: by `t`, then `kind`, then `pc` (absent first), then `track`
 * (absent first).
 */
export function compareFindings(left: Finding, right: Finding): number {
  if (left.t !== right.t) return left.t - right.t;
  return (
    compareStrings(left.kind, right.kind) ||
    compareStrings(left.pc ?? '', right.pc ?? '') ||
    compareStrings(left.track ?? '', right.track ?? '')
  );
}
