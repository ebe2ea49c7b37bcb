import { deviceClassSchema, severitySchema } from '@svc/protocol';
import { z } from 'zod';
import type { CallFinding } from '../../platform/database/tables/calls.table.ts';
import type { Chunk } from '../../platform/database/tables/chunks.table.ts';
import type { SessionSignal } from '../../platform/database/tables/session-signals.table.ts';
import type { Session } from '../../platform/database/tables/sessions.table.ts';
import { nameAndVersion, nameAndVersionSchema, optional } from '../../platform/http/views.ts';

// The API's views of sessions. Times are ISO 8601 strings; what is unknown is omitted, never
// null (a session whose first chunk has not arrived yet has no metadata).

const userViewSchema = z.object({
  id: z.string(),
  email: z.string().optional(),
  name: z.string().optional(),
});

/** An element of `GET /v1/sessions`. */
export const sessionSummarySchema = z.object({
  id: z.string(),
  visitId: z.string().optional(),
  startedAt: z.iso.datetime(),
  durationMs: z.int().min(0),
  url: z.string().optional(),
  user: userViewSchema.optional(),
  browser: nameAndVersionSchema.optional(),
  os: nameAndVersionSchema.optional(),
  device: deviceClassSchema.optional(),
  errorCount: z.int().min(0),
  /** The highest severity among the session's signals. */
  level: severitySchema.optional(),
  chunkCount: z.int().min(0),
  /** Sequence numbers are missing, or the SDK reported a gap in the recording. */
  hasGaps: z.boolean(),
  release: z.string().optional(),
  environment: z.string().optional(),
});
export type SessionSummary = z.infer<typeof sessionSummarySchema>;

/** One stored chunk in a session's manifest. */
export const chunkManifestEntrySchema = z.object({
  seq: z.int().min(0),
  /** Size of the chunk's JSON (what `GET /v1/sessions/{id}/chunks/{seq}` returns), in bytes. */
  sizeBytes: z.int().min(0),
  eventCount: z.int().min(0),
  firstEventAt: z.iso.datetime().optional(),
  lastEventAt: z.iso.datetime().optional(),
  receivedAt: z.iso.datetime(),
});
type ChunkManifestEntry = z.infer<typeof chunkManifestEntrySchema>;

/** A hole in the recording: sequence numbers never received, or a gap the SDK reported. */
const sessionGapSchema = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('missing'), fromSeq: z.int().min(0), toSeq: z.int().min(0) }),
  z.object({ kind: z.literal('sdk'), fromT: z.iso.datetime(), toT: z.iso.datetime(), reason: z.string() }),
]);
type SessionGap = z.infer<typeof sessionGapSchema>;

/** `GET /v1/sessions/{id}`: metadata, the chunk manifest and the gaps. */
export const sessionDetailSchema = z.object({
  id: z.string(),
  visitId: z.string().optional(),
  startedAt: z.iso.datetime(),
  lastEventAt: z.iso.datetime(),
  durationMs: z.int().min(0),
  url: z.string().optional(),
  referrer: z.string().optional(),
  userAgent: z.string().optional(),
  browser: nameAndVersionSchema.optional(),
  os: nameAndVersionSchema.optional(),
  device: deviceClassSchema.optional(),
  viewport: z.object({ w: z.int(), h: z.int() }).optional(),
  release: z.string().optional(),
  environment: z.string().optional(),
  user: userViewSchema.optional(),
  recording: z.object({ mode: z.string() }).optional(),
  sdk: nameAndVersionSchema.optional(),
  errorCount: z.int().min(0),
  level: severitySchema.optional(),
  chunks: z.array(chunkManifestEntrySchema),
  gaps: z.array(sessionGapSchema),
});
export type SessionDetail = z.infer<typeof sessionDetailSchema>;

/** A signal of the session: an error, a custom event with a severity, a recording trigger. */
const sessionSignalIssueSchema = z.object({
  kind: z.enum(['error', 'custom', 'gap', 'trigger']),
  severity: severitySchema,
  name: z.string(),
  message: z.string().optional(),
  t: z.iso.datetime(),
  /** Where the event is: `GET /v1/sessions/{id}/chunks/{seq}`, `events[index]`. */
  seq: z.int().min(0),
  index: z.int().min(0),
  details: z.record(z.string(), z.unknown()),
});

/** A detector finding on one of the session's calls (or on the session, for media errors). */
const sessionFindingIssueSchema = z.object({
  kind: z.literal('finding'),
  severity: severitySchema,
  /** The detector kind, e.g. `webrtc_packet_loss`. */
  name: z.string(),
  t: z.iso.datetime(),
  /** The call (`GET /v1/calls/{id}`) and peer connection; omitted for session-wide findings. */
  callId: z.string().optional(),
  pc: z.string().optional(),
  track: z.string().optional(),
  /** The detector's evidence. */
  details: z.record(z.string(), z.unknown()),
});

/** An element of `GET /v1/sessions/{id}/issues`: a signal or a detector finding. */
export const sessionIssueSchema = z.union([sessionSignalIssueSchema, sessionFindingIssueSchema]);
export type SessionIssue = z.infer<typeof sessionIssueSchema>;

/** An element of `GET /v1/sessions/{id}/events`: the event as stored (as the SDK sent it, less what ingest removed), and where it is. */
export const flatEventSchema = z.object({
  seq: z.int().min(0),
  index: z.int().min(0),
  event: z.looseObject({ t: z.number(), type: z.string() }),
});
export type FlatEvent = z.infer<typeof flatEventSchema>;

function userOf(session: Session) {
  if (session.user_id === null) return undefined;
  return { id: session.user_id, email: optional(session.user_email), name: optional(session.user_name) };
}

function deviceOf(session: Session) {
  const device = deviceClassSchema.safeParse(session.device);
  return device.success ? device.data : undefined;
}

function levelOf(session: Session) {
  const level = severitySchema.safeParse(session.level);
  return level.success ? level.data : undefined;
}

/** Sequence numbers are missing between 0 and the highest one received. */
function hasMissingSeq(session: Pick<Session, 'chunk_count' | 'max_seq'>): boolean {
  return session.chunk_count < session.max_seq + 1;
}

export function toSessionSummary(session: Session & { has_gap_signal: unknown }): SessionSummary {
  return {
    id: session.id,
    visitId: optional(session.visit_id),
    startedAt: session.started_at.toISOString(),
    durationMs: Math.max(0, session.duration_ms),
    url: optional(session.url),
    user: userOf(session),
    browser: nameAndVersion(session.browser_name, session.browser_version),
    os: nameAndVersion(session.os_name, session.os_version),
    device: deviceOf(session),
    errorCount: session.error_count,
    level: levelOf(session),
    chunkCount: session.chunk_count,
    hasGaps: hasMissingSeq(session) || Boolean(session.has_gap_signal),
    release: optional(session.release),
    environment: optional(session.environment),
  };
}

/** Runs of sequence numbers between 0 and the highest received seq that never arrived. */
export function missingSeqRanges(seqs: readonly number[]): Array<{ fromSeq: number; toSeq: number }> {
  const ranges: Array<{ fromSeq: number; toSeq: number }> = [];
  let expected = 0;
  for (const seq of [...seqs].sort((left, right) => left - right)) {
    if (seq > expected) ranges.push({ fromSeq: expected, toSeq: seq - 1 });
    expected = Math.max(expected, seq + 1);
  }
  return ranges;
}

function timeOf(value: unknown, fallback: Date): string {
  if (typeof value === 'number' && Number.isFinite(value)) return new Date(value).toISOString();
  if (typeof value === 'string' && !Number.isNaN(Date.parse(value))) return new Date(value).toISOString();
  return fallback.toISOString();
}

/** An SDK `gap` signal as a gap: `details.fromT`/`details.toT` (epoch ms), `name` is the reason. */
function toSdkGap(signal: SessionSignal): SessionGap {
  const details = signal.details ?? {};
  return {
    kind: 'sdk',
    fromT: timeOf(details.fromT, signal.t),
    toT: timeOf(details.toT, signal.t),
    reason: signal.name,
  };
}

function toChunkManifestEntry(chunk: Chunk): ChunkManifestEntry {
  return {
    seq: chunk.seq,
    sizeBytes: chunk.inflated_bytes,
    eventCount: chunk.event_count,
    firstEventAt: chunk.first_event_at?.toISOString(),
    lastEventAt: chunk.last_event_at?.toISOString(),
    receivedAt: chunk.received_at.toISOString(),
  };
}

export function toSessionDetail(
  session: Session,
  chunks: readonly Chunk[],
  gapSignals: readonly SessionSignal[],
): SessionDetail {
  return {
    id: session.id,
    visitId: optional(session.visit_id),
    startedAt: session.started_at.toISOString(),
    lastEventAt: session.last_event_at.toISOString(),
    durationMs: Math.max(0, session.duration_ms),
    url: optional(session.url),
    referrer: optional(session.referrer),
    userAgent: optional(session.user_agent),
    browser: nameAndVersion(session.browser_name, session.browser_version),
    os: nameAndVersion(session.os_name, session.os_version),
    device: deviceOf(session),
    viewport:
      session.viewport_width === null || session.viewport_height === null
        ? undefined
        : { w: session.viewport_width, h: session.viewport_height },
    release: optional(session.release),
    environment: optional(session.environment),
    user: userOf(session),
    recording: session.recording_mode === null ? undefined : { mode: session.recording_mode },
    sdk: nameAndVersion(session.sdk_name, session.sdk_version),
    errorCount: session.error_count,
    level: levelOf(session),
    chunks: chunks.map(toChunkManifestEntry),
    gaps: [
      ...missingSeqRanges(chunks.map((chunk) => chunk.seq)).map((range) => ({
        kind: 'missing' as const,
        ...range,
      })),
      ...gapSignals.map(toSdkGap),
    ],
  };
}

export function toFindingIssue(finding: CallFinding): SessionIssue {
  return {
    kind: 'finding',
    severity: severitySchema.catch('info').parse(finding.severity),
    name: finding.kind,
    t: finding.t.toISOString(),
    callId: optional(finding.call_id),
    pc: finding.pc === '' ? undefined : finding.pc,
    track: optional(finding.track),
    details: finding.evidence ?? {},
  };
}

/** A signal shown as an issue of the session (a `trace` links a request to its trace: it is none). */
export function toSessionIssue(
  signal: SessionSignal & { kind: Exclude<SessionSignal['kind'], 'trace'> },
): SessionIssue {
  return {
    kind: signal.kind,
    severity: signal.severity ?? 'info',
    name: signal.name,
    message: optional(signal.message),
    t: signal.t.toISOString(),
    seq: signal.seq,
    index: signal.event_index,
    details: signal.details ?? {},
  };
}
