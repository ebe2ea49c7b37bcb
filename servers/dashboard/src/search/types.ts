// `POST /v1/search` (servers/api/README.md, Search), as the search page uses it.

import type { Severity } from '../issues/types.ts';

export type SearchType = 'session' | 'call' | 'issue';

/** The structured query; `interpreted.query` of a question is one too. */
export interface SearchQuery {
  q?: string;
  types?: SearchType[];
  from?: string;
  to?: string;
  filters?: Record<string, string | number | boolean>;
  limit?: number;
  cursor?: string;
}

interface ResultBase {
  id: string;
  score: number;
  title: string;
  snippet?: string;
  /** A session's or call's start, an issue's last occurrence. */
  t: string;
  /** The result's page in the dashboard (a path, `?t=` for a session found by an event). */
  url: string;
}

export type SearchResult =
  | (ResultBase & {
      type: 'session';
      session: {
        url?: string;
        user?: { id: string; email?: string; name?: string };
        browser?: { name: string; version?: string };
        os?: string;
        device?: string;
        durationMs: number;
        errorCount: number;
        level?: Severity;
        release?: string;
        environment?: string;
      };
    })
  | (ResultBase & {
      type: 'call';
      call: {
        sessionId: string;
        state: 'open' | 'closed';
        durationMs?: number;
        qualityScore?: number;
        relayed: boolean;
        failedToConnect: boolean;
        failureReason?: string;
        networkType?: string;
        browser?: string;
        findings: string[];
      };
    })
  | (ResultBase & {
      type: 'issue';
      issue: {
        kind: string;
        severity: Severity;
        status: 'open' | 'resolved' | 'ignored';
        firstSeenAt: string;
        count24h: number;
        occurrences: number;
      };
    });

export interface SearchAnswer {
  items: SearchResult[];
  nextCursor?: string;
  /** With `question`: the query that ran, and whether a model made it. */
  interpreted?: { query: SearchQuery; ai: { used: boolean; model?: string; reason?: string } };
}
