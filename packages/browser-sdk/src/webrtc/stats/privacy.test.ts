import { describe, expect, it } from 'vitest';
import { advance, DUMPS, type Dump, type PeerConnectionName, snapshotOf } from './__fixtures__/dumps.ts';
import { type StatsWindow, statsWindow } from './index.ts';

// PROTOCOL.md §3 privacy: no address, port, candidate id, ssrc or other identifier from the stats
// leaves the device, and no SDP. The only identifier in a window is a track's `key`, which the
// caller replaces with an opaque id before anything is sent.

/** Fields whose values identify a network endpoint, a candidate, a stream or a certificate. */
const IDENTIFYING_FIELDS = new Set([
  'id',
  'address',
  'ip',
  'port',
  'url',
  'relatedAddress',
  'relatedPort',
  'foundation',
  'usernameFragment',
  'iceLocalUsernameFragment',
  'localCandidateId',
  'remoteCandidateId',
  'selectedCandidatePairId',
  'transportId',
  'codecId',
  'sdpFmtpLine',
  'ssrc',
  'rtxSsrc',
  'trackIdentifier',
  'mediaSourceId',
  'remoteId',
  'localId',
  'playoutId',
  'fingerprint',
  'base64Certificate',
  'localCertificateId',
  'remoteCertificateId',
]);

/** Every identifying value in a dump: of the stats above, and the recorder's own `selected` view. */
function identifiersOf(dump: Dump, pc: PeerConnectionName): Array<string | number> {
  const found = new Set<string | number>();
  for (const stats of dump.stats[pc]) {
    for (const [field, value] of Object.entries(stats)) {
      // Strings of at least 4 characters: the fixed ids "P" (peer-connection), "AP" (media-playout)
      // and "T01" (transport) name no endpoint and are substrings of any JSON.
      if (!IDENTIFYING_FIELDS.has(field)) continue;
      if ((typeof value === 'string' && value.length >= 4) || typeof value === 'number') found.add(value);
    }
  }
  for (const side of [dump.selected[pc].local, dump.selected[pc].remote]) {
    found.add(side.address);
    found.add(side.port);
    if (side.url !== undefined) found.add(side.url);
  }
  found.add(dump.selected[pc].pairId);
  return [...found];
}

/** A window as the caller sends it: keys replaced by opaque ids. */
function withoutKeys(window: StatsWindow): string {
  return JSON.stringify({
    ...window,
    tracks: window.tracks.map(({ key, ...metrics }, index) => ({ id: index, ...metrics })),
  });
}

function windowsOf(dump: Dump, pc: PeerConnectionName): StatsWindow[] {
  const first = snapshotOf(dump, pc);
  const add: Record<string, Record<string, number>> = {};
  for (const stats of first.stats.values()) {
    if (stats.type === 'inbound-rtp') add[stats.id] = { packetsReceived: 100, bytesReceived: 90_000 };
    if (stats.type === 'outbound-rtp') add[stats.id] = { packetsSent: 100, bytesSent: 90_000 };
  }
  return [statsWindow(undefined, first), statsWindow(first, advance(first, 1000, { add }))];
}

describe('statsWindow: privacy', () => {
  const cases = DUMPS.flatMap((dump) =>
    (['pc1', 'pc2'] as const).map((pc) => [dump.name, pc, dump] as const),
  );

  it.each(cases)('%s %s: no identifier from the stats in the output', (_name, pc, dump: Dump) => {
    const identifiers = identifiersOf(dump, pc);
    expect(identifiers).toContain('127.0.0.1');
    for (const window of windowsOf(dump, pc)) {
      const json = withoutKeys(window);
      for (const identifier of identifiers) {
        if (typeof identifier === 'string') expect(json).not.toContain(identifier);
        // A number (port, ssrc) must not appear as a whole number anywhere.
        else expect(json).not.toMatch(new RegExp(`(?<![\\d.])${identifier}(?![\\d.])`));
      }
      expect(json).not.toMatch(/\d+\.\d+\.\d+\.\d+|[0-9a-f]{1,4}:[0-9a-f]{1,4}:|a=|candidate|turn:|typ /i);
      // Keys carry the ssrc, by design, and nothing else from the stats.
      for (const track of window.tracks) expect(track.key).toMatch(/^(audio|video):(in|out):\d+$/);
    }
  });
});
