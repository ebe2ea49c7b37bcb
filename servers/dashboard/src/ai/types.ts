// What the analysis and AI endpoints answer (servers/api/README.md: Transcripts, explanations and
// reproductions; The model; Search), as the pages use them.

import type { Severity } from '../issues/types.ts';

/**
 * What an answer says of the model: its prose when one took part, else why not (no model
 * configured, AI off for the organization, the feature not allowed, the cap reached).
 */
export type ModelNote =
  | { used: false; reason: string }
  | {
      used: true;
      model: string;
      /** Grounded on the transcript; cites evidence ids in brackets (`[0.14]`). */
      text: string;
      /** The ids it cites that the transcript really has. */
      evidenceIds: string[];
    };

/** What `POST /v1/ai/feedback` rates. */
export type AiFeature = 'summary' | 'explain' | 'search' | 'chat' | 'draft_pr';

/** `GET /v1/sessions/{id}/transcript`. */
export interface Transcript {
  sessionId: string;
  startedAt: string;
  durationMs: number;
  header: string[];
  entries: TranscriptEntry[];
  truncated: boolean;
  text: string;
}

export interface TranscriptEntry {
  /** The evidence id: `<seq>.<index>` of an event, `finding:<pc>:<kind>`, `call:<id>`. */
  id: string;
  kind: string;
  offsetMs: number;
  t: string;
  text: string;
  details?: string[];
  repeat?: number;
  repeatIds?: string[];
}

/** A likely cause of a problem, from the server's written tables. */
export interface Cause {
  id: string;
  title: string;
  why: string;
  tryThis: string[];
  confidence: 'high' | 'medium' | 'low';
}

/** A problem of a session's explanation. */
export interface Problem {
  id: string;
  kind: string;
  severity: Severity;
  title: string;
  t: string;
  offsetMs: number;
  count: number;
  evidence: Record<string, unknown>;
  evidenceIds: string[];
  callId?: string;
  causes: Cause[];
}

/** `POST /v1/sessions/{id}/explain`. */
export interface SessionExplanation {
  explanation: {
    subject: { type: 'session' | 'call'; id: string; sessionId: string };
    summary: string;
    problems: Problem[];
  };
  ai: ModelNote;
}

/** `GET /v1/sessions/{id}/summary`. */
export interface SessionSummary {
  sessionId: string;
  summary: string;
  routes: string[];
  counts: {
    pages: number;
    clicks: number;
    errors: number;
    failedRequests: number;
    calls: number;
    findings: number;
  };
  problems: { id: string; kind: string; severity: string; title: string }[];
  ai: ModelNote;
}

/** `POST /v1/sessions/{id}/repro`. */
export interface Reproduction {
  sessionId: string;
  startUrl: string | null;
  steps: string[];
  /** A Playwright test (TypeScript); `BASE_URL` points it at another deployment. */
  script: string;
  notes: string[];
}

/** A dimension an issue's occurrences are broken down by. */
export type Dimension = 'release' | 'browser' | 'os' | 'device' | 'environment' | 'network';

export interface DimensionValue {
  value: string;
  occurrences: number;
  /** Share of the issue's occurrences (0..1). */
  share: number;
  /** Share of the project's sessions (calls, for the network) in the same days (0..1). */
  baselineShare: number;
  lift: number | null;
}

/** `POST /v1/issues/{id}/explain`. */
export interface IssueExplanation {
  explanation: {
    subject: { type: 'issue'; id: string };
    summary: string;
    window: { from: string; to: string };
    occurrences: number;
    sessions: number;
    concentrations: (DimensionValue & { dimension: Dimension })[];
    breakdown: Partial<Record<Dimension, DimensionValue[]>>;
    causes: Cause[];
    latest?: { sessionId: string; evidenceId: string; evidence: Record<string, unknown> };
    exampleSessions: string[];
  };
  ai: ModelNote;
}

/** A frame as processing stored it (symbolicated where a source map matched). */
export interface DraftFrame {
  function?: string;
  file?: string;
  line?: number;
  column?: number;
  mapped: boolean;
  context?: { before: string[]; line: string; after: string[] };
}

/** `POST /v1/issues/{id}/draft-pr`. */
export interface DraftFix {
  issueId: string;
  error?: { sessionId: string; name: string; message?: string; frames: DraftFrame[] };
  /** The top mapped frame, with its source lines: where a fix would go. */
  location?: DraftFrame;
  /** The model's unified diff (never applied); null without one. */
  diff: string | null;
  reason?: string;
  ai: ModelNote;
}
