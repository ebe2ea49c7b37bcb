/**
 * The recorded `getStats()` dumps of headless Chromium 156 (the workspace's shared recordings,
 * `@svc-dev/fixtures/getstats`) and the helpers the tests build snapshots with.
 *
 * Each dump holds one snapshot per peer connection of a two-peer call on one page: `pc1` sends
 * (outbound-rtp, remote-inbound-rtp), `pc2` receives (inbound-rtp, remote-outbound-rtp).
 * `selected` is the recorder's own reading of the selected candidate pair (with addresses, which
 * the privacy test looks for in the output).
 */

import hostLoopback from '@svc-dev/fixtures/getstats/chromium156-host-loopback.json' with { type: 'json' };
import turnRelay from '@svc-dev/fixtures/getstats/chromium156-turn-relay.json' with { type: 'json' };
import turnRelay300kbit from '@svc-dev/fixtures/getstats/chromium156-turn-relay-300kbit.json' with {
  type: 'json',
};
import turnRelayLoss from '@svc-dev/fixtures/getstats/chromium156-turn-relay-loss.json' with { type: 'json' };
import { type RTCStatsLike, type StatsSnapshot, toSnapshot } from '../snapshot.ts';

export type PeerConnectionName = 'pc1' | 'pc2';

interface SelectedCandidate {
  candidateType: string;
  protocol: string;
  address: string;
  port: number;
  relayProtocol?: string;
  url?: string;
}

export interface Dump {
  name: string;
  browserVersion: string;
  selected: Record<
    PeerConnectionName,
    { pairId: string; local: SelectedCandidate; remote: SelectedCandidate }
  >;
  stats: Record<PeerConnectionName, RTCStatsLike[]>;
}

export const DUMPS: readonly Dump[] = [
  { name: 'chromium156-host-loopback', ...(hostLoopback as Omit<Dump, 'name'>) },
  { name: 'chromium156-turn-relay', ...(turnRelay as Omit<Dump, 'name'>) },
  { name: 'chromium156-turn-relay-loss', ...(turnRelayLoss as Omit<Dump, 'name'>) },
  { name: 'chromium156-turn-relay-300kbit', ...(turnRelay300kbit as Omit<Dump, 'name'>) },
];

export function dumpNamed(name: string): Dump {
  const dump = DUMPS.find((candidate) => candidate.name === name);
  if (dump === undefined) throw new Error(`No dump ${name}`);
  return dump;
}

/** When the first snapshot of every test is taken (the dumps' own clock, ms). */
export const FIRST_TAKEN_AT = 1_795_303_190_000;

/** A snapshot of one peer connection of a dump: a deep copy, so tests may change it. */
export function snapshotOf(
  dump: Dump,
  peerConnection: PeerConnectionName,
  takenAt = FIRST_TAKEN_AT,
): StatsSnapshot {
  return toSnapshot(structuredClone(dump.stats[peerConnection]), takenAt);
}

/** The one stats object of `type` (and `kind`) in a snapshot; throws unless there is exactly one. */
export function findStats(snapshot: StatsSnapshot, type: string, kind?: 'audio' | 'video'): RTCStatsLike {
  const found = [...snapshot.stats.values()].filter(
    (stats) => stats.type === type && (kind === undefined || stats.kind === kind),
  );
  if (found.length !== 1 || found[0] === undefined) throw new Error(`${found.length} ${type} ${kind ?? ''}`);
  return found[0];
}

/** Changes to a snapshot, by stats id then field. */
export interface Changes {
  /** Added to a numeric field (a counter advancing); a record adds per key (`qualityLimitationDurations`). */
  add?: Record<string, Record<string, number | Record<string, number>>>;
  /** Replaces a field's value; `undefined` deletes the field. */
  set?: Record<string, Record<string, unknown>>;
}

/**
 * The second snapshot of a window: a deep copy of `snapshot` taken `elapsedMs` later, with every
 * object's `timestamp` advanced by `elapsedMs` (as Chromium stamps each report; give a
 * remote-inbound-rtp its old `timestamp` in `set` to model no new RTCP report), then `add`
 * applied (counters advanced by the given deltas; a negative delta models a counter reset) and
 * `set` applied (gauges replaced, fields deleted). Throws on an unknown id or on adding to a
 * field that is not a number, so a typo cannot make a test pass.
 *
 * @example
 * ```ts
 * const later = advance(first, 5000, { add: { [video.id]: { packetsReceived: 500, packetsLost: 5 } } });
 * ```
 */
export function advance(snapshot: StatsSnapshot, elapsedMs: number, changes: Changes = {}): StatsSnapshot {
  const stats = structuredClone([...snapshot.stats.values()]);
  const byId = new Map(stats.map((item) => [item.id, item]));
  const target = (id: string) => {
    const item = byId.get(id);
    if (item === undefined) throw new Error(`No stats ${id}`);
    return item;
  };
  for (const item of stats) item.timestamp += elapsedMs;
  for (const [id, fields] of Object.entries(changes.add ?? {})) {
    const item = target(id);
    for (const [field, delta] of Object.entries(fields)) {
      const value = item[field];
      if (typeof delta === 'number' && typeof value === 'number') item[field] = value + delta;
      else if (typeof delta === 'object' && typeof value === 'object' && value !== null) {
        const record = value as Record<string, number>;
        for (const [key, amount] of Object.entries(delta)) record[key] = (record[key] ?? 0) + amount;
      } else throw new Error(`Cannot add to ${id}.${field}`);
    }
  }
  for (const [id, fields] of Object.entries(changes.set ?? {})) {
    const item = target(id);
    for (const [field, value] of Object.entries(fields)) {
      if (value === undefined) delete item[field];
      else item[field] = value;
    }
  }
  return toSnapshot(stats, snapshot.takenAt + elapsedMs);
}

/** A copy of `snapshot` without `fields` on the object `id` (a browser that does not report them). */
export function strip(snapshot: StatsSnapshot, id: string, fields: readonly string[]): StatsSnapshot {
  return advance(snapshot, 0, {
    set: { [id]: Object.fromEntries(fields.map((field) => [field, undefined])) },
  });
}
