// The API's answers the player reads (servers/api/src/modules/sessions/views.ts): a session's
// detail with its chunk manifest and gaps, its stored chunks, its events and its issues.

/** One stored chunk in a session's manifest. */
export interface ChunkManifestEntry {
  seq: number;
  sizeBytes: number;
  eventCount: number;
  firstEventAt?: string;
  lastEventAt?: string;
  receivedAt: string;
  /** Only in a shared session: where to fetch the chunk. */
  url?: string;
}

/** A hole in the recording: sequence numbers never received, or a gap the SDK reported. */
export type SessionGap =
  | { kind: 'missing'; fromSeq: number; toSeq: number }
  | { kind: 'sdk'; fromT: string; toT: string; reason: string };

/** `GET /v1/sessions/{id}` (and, less `user`, `GET /share/{token}`). */
export interface SessionDetail {
  id: string;
  startedAt: string;
  lastEventAt: string;
  durationMs: number;
  url?: string;
  browser?: { name: string; version: string };
  os?: { name: string; version: string };
  device?: string;
  viewport?: { w: number; h: number };
  release?: string;
  environment?: string;
  user?: { id: string; email?: string; name?: string };
  errorCount: number;
  chunks: ChunkManifestEntry[];
  gaps: SessionGap[];
}

/** `GET /share/{token}`: the detail with a URL per chunk and when the link expires. */
export interface SharedSession extends SessionDetail {
  share: { expiresAt: string };
}

/** An event of a chunk, as the SDK sent it. */
export interface WireEvent {
  t: number;
  type: string;
  [field: string]: unknown;
}

/** `GET /v1/sessions/{id}/chunks/{seq}`: the chunk's JSON. */
export interface StoredChunk {
  seq: number;
  events: WireEvent[];
}

/** An element of `GET /v1/sessions/{id}/events`. */
export interface FlatEvent {
  seq: number;
  index: number;
  event: WireEvent;
}

/** An element of `GET /v1/sessions/{id}/issues`. */
export interface SessionIssue {
  kind: 'error' | 'custom' | 'gap' | 'trigger' | 'finding';
  severity: string;
  name: string;
  message?: string;
  t: string;
  seq?: number;
  index?: number;
  callId?: string;
  details: Record<string, unknown>;
}

/** `POST /v1/sessions/{id}/share`. */
export interface ShareCreated {
  token: string;
  url: string;
  expiresAt: string;
}
