import { type RTCStatsLike, readNumber, readString } from './snapshot.ts';

/**
 * An ICE candidate type.
 *
 * @example
 * ```ts
 * const type: CandidateType = 'relay';
 * ```
 */
export type CandidateType = 'host' | 'srflx' | 'prflx' | 'relay';

/**
 * The network type of the local candidate.
 *
 * @example
 * ```ts
 * const network: NetworkType = 'wifi';
 * ```
 */
export type NetworkType = 'wifi' | 'cellular' | 'ethernet' | 'vpn' | 'unknown';

/**
 * The `conn` of a call sample (PROTOCOL.md §2) without `state`, which `getStats()` does not
 * report: the caller adds `peerConnection.connectionState`. A field the stats lack is omitted.
 * Never an address, a port or a candidate id.
 *
 * @example
 * ```ts
 * const conn = { state: peerConnection.connectionState, ...statsWindow(previous, current).conn };
 * ```
 */
export interface ConnectionPath {
  localType?: CandidateType;
  remoteType?: CandidateType;
  protocol?: 'udp' | 'tcp' | 'tls';
  relayed?: boolean;
  network?: NetworkType;
}

const CANDIDATE_TYPES: readonly string[] = ['host', 'srflx', 'prflx', 'relay'];
const PROTOCOLS: readonly string[] = ['udp', 'tcp', 'tls'];
const NETWORK_TYPES: readonly string[] = ['wifi', 'cellular', 'ethernet', 'vpn', 'unknown'];

/**
 * How strongly a candidate pair claims to be its transport's selected pair, when the transport
 * does not say (`selectedCandidatePairId` missing): Firefox's `selected: true` wins, then a
 * nominated, succeeded pair, the one that moved the most bytes first (Chromium keeps several
 * nominated pairs after a switch: the dumps have up to three).
 */
function claim(pair: RTCStatsLike): number {
  if (pair.selected === true) return Number.POSITIVE_INFINITY;
  if (pair.nominated !== true || pair.state !== 'succeeded') return -1;
  return (readNumber(pair, 'bytesSent') ?? 0) + (readNumber(pair, 'bytesReceived') ?? 0);
}

/**
 * The selected candidate pair of every transport, by transport id (one pass over the pairs,
 * then one over the transports), and the pair that describes the connection: the first
 * transport's in report order (with BUNDLE, the only one).
 */
export function selectCandidatePairs(
  pairs: readonly RTCStatsLike[],
  transports: readonly RTCStatsLike[],
  stats: ReadonlyMap<string, RTCStatsLike>,
): { byTransport: Map<string, RTCStatsLike>; connection: RTCStatsLike | undefined } {
  const byTransport = new Map<string, RTCStatsLike>();
  const claims = new Map<string, number>();
  for (const pair of pairs) {
    // Keyed as window.ts looks pairs up: by the raw field (a pair without one under undefined).
    const transportId = pair.transportId as string;
    const strength = claim(pair);
    if (strength >= 0 && strength > (claims.get(transportId) ?? -1)) {
      claims.set(transportId, strength);
      byTransport.set(transportId, pair);
    }
  }
  let connection: RTCStatsLike | undefined;
  for (const transport of transports) {
    const named = stats.get(transport.selectedCandidatePairId as string);
    if (named?.type === 'candidate-pair') byTransport.set(transport.id, named);
    connection ??= byTransport.get(transport.id);
  }
  connection ??= byTransport.values().next().value;
  return { byTransport, connection };
}

function candidateType(candidate: RTCStatsLike | undefined): CandidateType | undefined {
  const type = readString(candidate, 'candidateType');
  return type !== undefined && CANDIDATE_TYPES.includes(type) ? (type as CandidateType) : undefined;
}

/**
 * The path of a selected candidate pair: candidate types, `protocol` (for a local relay
 * candidate, its `relayProtocol`: the leg from this device to the TURN server, the only place
 * `tls` shows up; else the local candidate's `protocol`), `relayed` (either side a relay; only
 * stated when that is known) and `network` (the local candidate's `networkType`; a type outside
 * the protocol's list, such as `wimax` or `bluetooth`, is `unknown`; omitted when absent).
 */
export function readConnectionPath(
  pair: RTCStatsLike,
  stats: ReadonlyMap<string, RTCStatsLike>,
): ConnectionPath {
  const local = stats.get(pair.localCandidateId as string);
  const remote = stats.get(pair.remoteCandidateId as string);
  const path: ConnectionPath = {};
  const localType = candidateType(local);
  const remoteType = candidateType(remote);
  if (localType !== undefined) path.localType = localType;
  if (remoteType !== undefined) path.remoteType = remoteType;
  const relayProtocol = localType === 'relay' ? readString(local, 'relayProtocol') : undefined;
  const protocol = relayProtocol ?? readString(local, 'protocol');
  if (protocol !== undefined && PROTOCOLS.includes(protocol))
    path.protocol = protocol as 'udp' | 'tcp' | 'tls';
  if (localType === 'relay' || remoteType === 'relay') path.relayed = true;
  else if (localType !== undefined && remoteType !== undefined) path.relayed = false;
  const network = readString(local, 'networkType');
  if (network !== undefined)
    path.network = NETWORK_TYPES.includes(network) ? (network as NetworkType) : 'unknown';
  return path;
}
