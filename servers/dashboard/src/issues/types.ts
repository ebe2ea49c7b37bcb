// What the issues API answers (servers/api/README.md, Issues and notifications).

export type IssueStatus = 'open' | 'resolved' | 'ignored';
export type Severity = 'info' | 'low' | 'medium' | 'high' | 'critical';

/** An issue cluster: findings of one detector kind, or errors of one fingerprint. */
export interface Issue {
  id: string;
  kind: string;
  fingerprint: string;
  title: string;
  severity: Severity;
  status: IssueStatus;
  firstSeenAt: string;
  lastSeenAt: string;
  /** Occurrences recorded in the last 24 h. */
  count24h: number;
  occurrences: number;
  sessions: number;
  /** Releases it occurred in, most recent first (at most 20). */
  releases: string[];
  lastRelease?: string;
  resolvedAt?: string;
  resolvedRelease?: string;
  /** Error clusters only: the error of the newest occurrence. */
  latestError?: LatestError;
}

/** A session an issue occurred in (`GET /v1/issues/{id}/sessions`). */
export interface IssueSession {
  sessionId: string;
  occurrences: number;
  firstAt: string;
  lastAt: string;
  release?: string;
  environment?: string;
}

/** A frame as printed by the browser (any part may be missing). */
export interface PrintedFrame {
  function?: string;
  file?: string;
  line?: number;
  column?: number;
}

/**
 * A frame of an error's stack after symbolication (`details.frames` of a session error,
 * `latestError.frames` of an issue): where the source map put it, or as printed.
 */
export type StackFrame =
  | {
      mapped: true;
      function?: string;
      file: string;
      line: number;
      column: number;
      /** The minified place, as printed. */
      generated: PrintedFrame;
      /** Lines of the original source around `line`. */
      context?: { before: string[]; line: string; after: string[] };
    }
  | ({ mapped: false } & PrintedFrame);

/** `latestError` of `GET /v1/issues/{id}`: the error of the cluster's newest occurrence. */
export interface LatestError {
  sessionId: string;
  t: string;
  name: string;
  message?: string;
  /** As the browser printed it. */
  stack?: string;
  /** Top frame first, when a source map mapped at least one. */
  frames?: StackFrame[];
}
