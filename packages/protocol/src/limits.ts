/**
 * Limits of protocol v1 that the server and every SDK enforce. An SDK seals a chunk before it
 * reaches any of them; the server refuses a body that exceeds them with an `invalid` error body.
 * The README explains how each value was chosen.
 *
 * @example
 * ```ts
 * import { PROTOCOL_LIMITS } from '@svc/protocol';
 *
 * if (compressed.byteLength > PROTOCOL_LIMITS.maxCompressedBytes) sealChunkEarly();
 * ```
 */
export const PROTOCOL_LIMITS = {
  /** Largest request body as sent (deflated or plain JSON): 1 MiB. */
  maxCompressedBytes: 1_048_576,
  /** Largest body after inflating: 16 MiB, enforced while inflating (deflate bombs cost bounded memory). */
  maxInflatedBytes: 16_777_216,
  /** Most events in one chunk. */
  maxEventsPerChunk: 10_000,
  /** Earliest accepted timestamp: 2000-01-01T00:00:00Z. */
  minTimestamp: 946_684_800_000,
  /** Latest accepted timestamp: 2100-01-01T00:00:00Z. */
  maxTimestamp: 4_102_444_800_000,
  /** Longest duration (`...Ms`, except latencies): 31 days. */
  maxDurationMs: 2_678_400_000,
  /** Longest call-sample window: 10 minutes (20 times the longest governor interval). */
  maxWindowMs: 600_000,
  /** Largest latency (`rttMs`, `jitterMs`, `jitterBufferMs`): 60 s. */
  maxLatencyMs: 60_000,
  /** Largest counter (sequence numbers, packet and frame counts): 2^31 - 1. */
  maxCount: 2_147_483_647,
  /** Largest throughput (`kbps`, `available...Kbps`): 10 Gbit/s. */
  maxKbps: 10_000_000,
  /** Largest frame rate. */
  maxFramesPerSecond: 1_000,
  /** Largest width or height in pixels (viewport, video). */
  maxDimension: 16_384,
  /** Most track entries in one call sample. */
  maxTracksPerSample: 256,
  /** Most detector kinds in a call sample's `cross`. */
  maxCrossedDetectors: 32,
  /** Most devices of one kind in a device event. */
  maxDevices: 1_024,
  /** Most ICE servers counted on `pc_created`. */
  maxIceServers: 1_024,
  /** Longest URL (`url`, `referrer`, webhook links). */
  maxUrlLength: 8_192,
  /** Longest user agent string. */
  maxUserAgentLength: 1_024,
  /** Longest error message (error events, error bodies, webhook summaries). */
  maxMessageLength: 8_192,
  /** Longest stack trace. */
  maxStackLength: 65_536,
  /** Longest name, label, version, identifier or other short text. */
  maxNameLength: 256,
  /** Most properties on a custom event's `props`, a webhook's `counts` or `links`. */
  maxProperties: 64,
  /** Longest string value in a custom event's `props`. */
  maxPropertyValueLength: 1_024,
  /** Longest list cursor. */
  maxCursorLength: 1_024,
} as const;

/**
 * The type of {@link PROTOCOL_LIMITS}.
 *
 * @example
 * ```ts
 * import type { ProtocolLimits } from '@svc/protocol';
 *
 * const limit: ProtocolLimits['maxEventsPerChunk'] = 10_000;
 * ```
 */
export type ProtocolLimits = typeof PROTOCOL_LIMITS;
