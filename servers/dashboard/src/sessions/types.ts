// The session answers of the API (servers/api README, Reading sessions), as the pages use them.

export type Severity = 'critical' | 'high' | 'medium' | 'low' | 'info';

/** A row of `GET /v1/sessions`. */
export interface SessionSummary {
  id: string;
  visitId?: string;
  startedAt: string;
  durationMs: number;
  url?: string;
  user?: { id?: string; email?: string; name?: string };
  browser?: { name: string; version?: string };
  os?: { name: string; version?: string };
  device?: 'desktop' | 'mobile' | 'tablet';
  errorCount: number;
  level?: Severity;
  chunkCount: number;
  hasGaps: boolean;
  release?: string;
  environment?: string;
}
