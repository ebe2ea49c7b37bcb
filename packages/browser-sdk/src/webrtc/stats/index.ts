/**
 * `getStats()` snapshots to call-sample windows (PROTOCOL.md §2): take a {@link StatsSnapshot}
 * per poll with {@link toSnapshot}, then {@link statsWindow} of two snapshots gives the window's
 * connection path and track metrics. Pure functions, no dependencies, no Node API.
 *
 * @packageDocumentation
 */
export type { CandidateType, ConnectionPath, NetworkType } from './connection.ts';
export { type RTCStatsLike, type StatsSnapshot, toSnapshot } from './snapshot.ts';
export type { WindowTrack } from './track.ts';
export { type StatsWindow, statsWindow } from './window.ts';
