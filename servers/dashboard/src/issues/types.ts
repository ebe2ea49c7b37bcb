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
