// What the notifications API answers (servers/api/README.md, Issues and notifications).

import type { Severity } from '../issues/types.ts';

export interface Channel {
  id: string;
  type: 'webhook';
  name: string;
  url: string;
  enabled: boolean;
  /** While set, deliveries are signed with the previous secret too (24 h after a rotation). */
  previousSecretExpiresAt?: string;
  createdAt: string;
  updatedAt: string;
}

/** `POST /channels` and `POST /channels/{id}/rotate-secret`: the secret is in this answer only. */
export interface ChannelWithSecret {
  channel: Channel;
  secret: string;
}

export const CLUSTER_RULE_EVENTS = [
  'cluster.created',
  'cluster.threshold',
  'cluster.regressed',
  'cluster.reopened',
  'error.new',
  'error.rate',
] as const;
export type ClusterRuleEvent = (typeof CLUSTER_RULE_EVENTS)[number];

export const SECURITY_EVENTS = [
  'security.token_created',
  'security.sso_changed',
  'security.break_glass',
  'privacy.leak_radar',
] as const;
export type SecurityEvent = (typeof SECURITY_EVENTS)[number];

/** Events whose rule needs a `threshold` on the occurrences in 24 h. */
export const THRESHOLD_EVENTS: ReadonlySet<string> = new Set(['cluster.threshold', 'error.rate']);

export type PropertyValue = string | number | boolean;

export type RuleSource =
  | {
      type: 'cluster';
      events: ClusterRuleEvent[];
      kinds?: string[];
      minSeverity?: Severity;
      environment?: string;
      release?: string;
      threshold?: number;
    }
  | {
      type: 'custom';
      name: string;
      properties?: Record<string, PropertyValue>;
      minSeverity?: Severity;
      environment?: string;
      release?: string;
    }
  | { type: 'security'; events?: SecurityEvent[] };

export interface Rule {
  id: string;
  name: string;
  enabled: boolean;
  source: RuleSource;
  channelIds: string[];
  throttleMinutes: number;
  createdAt: string;
  updatedAt: string;
}

export interface DeliveryAttempt {
  attempt: number;
  startedAt: string;
  durationMs: number;
  outcome: 'delivered' | 'failed' | 'refused';
  statusCode?: number;
  /** The first 2 KB of the response. */
  responseBody?: string;
  error?: string;
}

export interface Delivery {
  id: string;
  eventId: string;
  eventType: string;
  channelId: string;
  status: 'pending' | 'delivered' | 'failed';
  attempts: number;
  nextAttemptAt?: string;
  lastStatus?: number;
  lastError?: string;
  replayOf?: string;
  deliveredAt?: string;
  createdAt: string;
  attemptLog: DeliveryAttempt[];
}

export interface InboxItem {
  /** The event id (`evt_`), the same the webhooks of this notification carry. */
  id: string;
  type: string;
  severity: Severity;
  title: string;
  summary: string;
  clusterId?: string;
  createdAt: string;
  ackedAt?: string;
  data: Record<string, unknown>;
}
