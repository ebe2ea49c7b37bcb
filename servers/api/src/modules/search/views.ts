import { deviceClassSchema, severitySchema } from '@svc/protocol';
import { z } from 'zod';
import type { IssueCluster } from '../../platform/database/tables/issues.table.ts';
import { nameAndVersion, nameAndVersionSchema, optional } from '../../platform/http/views.ts';
import { type FreeText, snippetOf } from './free-text.ts';
import type { CallRow, SearchHit, SessionRow } from './repository.ts';

// The answer of a search: each result with what it is (`type`), how well it matched (`score`), a
// title, where the text matched (`snippet`), its time, its page in the dashboard, and a small
// summary of its type. What is unknown is omitted, never null.

const resultShape = {
  id: z.string(),
  /** Higher is better; 0 without free text (then newest first). */
  score: z.number(),
  title: z.string(),
  /** Where the free text matched: the error, event or field, cut around the first word found. */
  snippet: z.string().optional(),
  /** A session's or call's start, an issue's last occurrence. */
  t: z.iso.datetime(),
  /** The result's page in the dashboard (a path: `/sessions/{id}`, `/calls/{id}`, `/issues/{id}`). */
  url: z.string(),
};

const sessionResultSchema = z.object({
  type: z.literal('session'),
  ...resultShape,
  session: z.object({
    /** The page the session started on. */
    url: z.string().optional(),
    user: z.object({ id: z.string(), email: z.string().optional(), name: z.string().optional() }).optional(),
    browser: nameAndVersionSchema.optional(),
    os: z.string().optional(),
    device: deviceClassSchema.optional(),
    durationMs: z.int().min(0),
    errorCount: z.int().min(0),
    level: severitySchema.optional(),
    release: z.string().optional(),
    environment: z.string().optional(),
  }),
});

const callResultSchema = z.object({
  type: z.literal('call'),
  ...resultShape,
  call: z.object({
    sessionId: z.string(),
    state: z.enum(['open', 'closed']),
    durationMs: z.int().min(0).optional(),
    /** 0..100; omitted when no sample could be scored. */
    qualityScore: z.int().min(0).max(100).optional(),
    relayed: z.boolean(),
    failedToConnect: z.boolean(),
    failureReason: z.string().optional(),
    networkType: z.string().optional(),
    browser: z.string().optional(),
    /** The kinds of the detectors' findings on the call. */
    findings: z.array(z.string()),
  }),
});

const issueResultSchema = z.object({
  type: z.literal('issue'),
  ...resultShape,
  issue: z.object({
    kind: z.string(),
    severity: severitySchema,
    status: z.enum(['open', 'resolved', 'ignored']),
    firstSeenAt: z.iso.datetime(),
    /** Occurrences recorded in the last 24 hours. */
    count24h: z.int().min(0),
    occurrences: z.int().min(0),
  }),
});

const searchResultSchema = z.discriminatedUnion('type', [
  sessionResultSchema,
  callResultSchema,
  issueResultSchema,
]);
export type SearchResult = z.infer<typeof searchResultSchema>;

/** `POST /v1/search`'s answer. */
export const searchAnswerSchema = z.object({
  items: z.array(searchResultSchema),
  /** Send it back as `cursor`, with the same query, for the next page; absent on the last page. */
  nextCursor: z.string().optional(),
});
export type SearchAnswer = z.infer<typeof searchAnswerSchema>;

const iso = (time: Date) => new Date(time).toISOString();
/** Scores as numbers people read: four decimals. */
const rounded = (score: number) => Math.round(score * 10_000) / 10_000;

/** A column's value as the schema reads it, or undefined (null, or a value the API does not name). */
function parsedOrUndefined<Schema extends z.ZodType>(
  schema: Schema,
  value: unknown,
): z.infer<Schema> | undefined {
  const parsed = schema.safeParse(value);
  return parsed.success ? parsed.data : undefined;
}

/**
 * The snippet of the text that holds the free text best: the whole of `q` first, then the most
 * of its words; the first such text in `texts` on a tie.
 */
function bestSnippet(text: FreeText | undefined, texts: ReadonlyArray<string | null | undefined>) {
  if (text === undefined) return undefined;
  let best: { text: string; hits: number } | undefined;
  for (const candidate of texts) {
    if (candidate === null || candidate === undefined) continue;
    const lower = candidate.toLowerCase();
    const whole = lower.includes(text.raw.toLowerCase()) ? text.terms.length : 0;
    const hits = whole + text.terms.filter((term) => lower.includes(term)).length;
    if (hits > 0 && (best === undefined || hits > best.hits)) best = { text: candidate, hits };
  }
  return best === undefined ? undefined : snippetOf(best.text, text.terms);
}

/** A session result. */
export function toSessionResult(hit: SearchHit, row: SessionRow, text: FreeText | undefined): SearchResult {
  const startedAt = new Date(row.started_at).getTime();
  const offset =
    hit.matched_at === null ? undefined : Math.max(0, new Date(hit.matched_at).getTime() - startedAt);
  return {
    type: 'session',
    id: row.id,
    score: rounded(hit.score),
    title: row.url ?? `Session ${row.id}`,
    snippet: bestSnippet(text, [
      hit.matched,
      row.url,
      row.user_email,
      row.user_id,
      row.user_name,
      row.release,
      row.environment,
    ]),
    t: iso(row.started_at),
    url: `/sessions/${row.id}${offset === undefined ? '' : `?t=${offset}`}`,
    session: {
      url: optional(row.url),
      user:
        row.user_id === null
          ? undefined
          : { id: row.user_id, email: optional(row.user_email), name: optional(row.user_name) },
      browser: nameAndVersion(row.browser_name, row.browser_version),
      os: optional(row.os_name),
      device: parsedOrUndefined(deviceClassSchema, row.device),
      durationMs: Number(row.duration_ms),
      errorCount: row.error_count,
      level: parsedOrUndefined(severitySchema, row.level),
      release: optional(row.release),
      environment: optional(row.environment),
    },
  };
}

/** A call's title: what went wrong first, then how it went. */
function callTitle(row: CallRow): string {
  const parts = [row.failed_to_connect ? 'Call failed to connect' : 'Call'];
  if (row.browser_name !== null) parts.push(row.browser_name);
  if (row.network_type !== null) parts.push(row.network_type);
  if (row.quality_score !== null) parts.push(`quality ${row.quality_score}`);
  if (row.relayed) parts.push('relayed');
  return parts.join(' · ');
}

/** A call result. */
export function toCallResult(hit: SearchHit, row: CallRow, text: FreeText | undefined): SearchResult {
  return {
    type: 'call',
    id: row.id,
    score: rounded(hit.score),
    title: callTitle(row),
    snippet: bestSnippet(text, [
      row.failure_reason,
      row.issue_kinds.join(' '),
      row.network_type,
      row.browser_name,
      row.os_name,
      row.session_url,
      row.session_user_email,
      row.end_user_id,
      row.release,
      row.environment,
    ]),
    t: iso(row.started_at),
    url: `/calls/${row.id}`,
    call: {
      sessionId: row.session_id,
      state: row.state,
      durationMs: row.duration_ms === null ? undefined : Number(row.duration_ms),
      qualityScore: optional(row.quality_score),
      relayed: row.relayed,
      failedToConnect: row.failed_to_connect,
      failureReason: optional(row.failure_reason),
      networkType: optional(row.network_type),
      browser: optional(row.browser_name),
      findings: row.issue_kinds,
    },
  };
}

/** An issue result, with its counts. */
export function toIssueResult(
  hit: SearchHit,
  row: IssueCluster,
  counts: { recent: number; occurrences: number } | undefined,
  text: FreeText | undefined,
): SearchResult {
  return {
    type: 'issue',
    id: row.id,
    score: rounded(hit.score),
    title: row.title,
    snippet: bestSnippet(text, [row.title, hit.matched, row.kind, row.fingerprint]),
    t: iso(row.last_seen_at),
    url: `/issues/${row.id}`,
    issue: {
      kind: row.kind,
      severity: row.severity,
      status: row.status,
      firstSeenAt: iso(row.first_seen_at),
      count24h: Number(counts?.recent ?? 0),
      occurrences: Number(counts?.occurrences ?? 0),
    },
  };
}
