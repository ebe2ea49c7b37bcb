import { DETECTOR_KINDS } from '@svc/detectors';
import { SEVERITY_ORDER, type Severity, severitySchema, type WebhookEventType } from '@svc/protocol';
import { z } from 'zod';

/** The event types a `cluster` rule can subscribe to. `error.*` only come from error clusters. */
const CLUSTER_RULE_EVENTS = [
  'cluster.created',
  'cluster.threshold',
  'cluster.regressed',
  'cluster.reopened',
  'error.new',
  'error.rate',
] as const;
export type ClusterRuleEvent = (typeof CLUSTER_RULE_EVENTS)[number];

/**
 * The security event types (API tokens, SSO, break-glass access, the leak radar's findings) a
 * `security` rule can subscribe to. Security events always reach the inbox, rule or not
 * (`notifySecurityEvent`).
 */
export const SECURITY_EVENT_TYPES = [
  'security.token_created',
  'security.sso_changed',
  'security.break_glass',
  'privacy.leak_radar',
] as const satisfies readonly WebhookEventType[];
export type SecurityEventType = (typeof SECURITY_EVENT_TYPES)[number];
const SECURITY_EVENTS: ReadonlySet<string> = new Set(SECURITY_EVENT_TYPES);

/**
 * The account event types (usage: a monthly cap reached 80 % or 100 %; billing: a subscription
 * changed) an `account` rule can subscribe to. Like security events, they always reach the inbox.
 */
export const ACCOUNT_EVENT_TYPES = [
  'usage.threshold',
  'billing.event',
] as const satisfies readonly WebhookEventType[];
export type AccountEventType = (typeof ACCOUNT_EVENT_TYPES)[number];
const ACCOUNT_EVENTS: ReadonlySet<string> = new Set(ACCOUNT_EVENT_TYPES);

/**
 * The regression event types (insights: a release worse than the one before it, a route's web
 * vital gone to a worse rating) a `regression` rule can subscribe to.
 */
const REGRESSION_EVENT_TYPES = [
  'release.regression',
  'vitals.regression',
] as const satisfies readonly WebhookEventType[];
type RegressionEventType = (typeof REGRESSION_EVENT_TYPES)[number];
const REGRESSION_EVENTS: ReadonlySet<string> = new Set(REGRESSION_EVENT_TYPES);

/**
 * The AI event types (reports: a daily or weekly digest, an anomaly of an hourly rate; an
 * asynchronous explanation ready) an `ai` rule can subscribe to.
 */
const AI_EVENT_TYPES = [
  'ai.digest',
  'ai.anomaly',
  'ai.deep_analysis_ready',
] as const satisfies readonly WebhookEventType[];
type AiEventType = (typeof AI_EVENT_TYPES)[number];
const AI_EVENTS: ReadonlySet<string> = new Set(AI_EVENT_TYPES);

/**
 * What a regression is about: a release's error rate or call quality (`release.regression`), or
 * a web vital of a route (`vitals.regression`).
 */
const REGRESSION_METRICS = ['error_rate', 'call_quality', 'LCP', 'INP', 'CLS', 'FCP', 'TTFB'] as const;
export type RegressionMetric = (typeof REGRESSION_METRICS)[number];

/** Event types whose rule needs a `threshold` (on the cluster's `count24h`). */
const THRESHOLD_EVENTS: ReadonlySet<string> = new Set(['cluster.threshold', 'error.rate']);

/** A cluster's kind: a detector kind, or `error`. */
export const CLUSTER_KINDS = [...DETECTOR_KINDS, 'error'] as const;

const filterText = z.string().trim().min(1).max(128);
const propertyValueSchema = z.union([z.string().max(1024), z.number(), z.boolean()]);

const clusterSourceSchema = z
  .strictObject({
    type: z.literal('cluster'),
    /** Which cluster transitions notify. */
    events: z.array(z.enum(CLUSTER_RULE_EVENTS)).min(1).max(CLUSTER_RULE_EVENTS.length),
    /** Only these kinds (detector kinds, `error`); all when absent. */
    kinds: z.array(z.enum(CLUSTER_KINDS)).min(1).max(CLUSTER_KINDS.length).optional(),
    /** Only clusters at least this severe. */
    minSeverity: severitySchema.optional(),
    /** Only occurrences from this environment / release (exact). */
    environment: filterText.optional(),
    release: filterText.optional(),
    /** `count24h` that `cluster.threshold` and `error.rate` fire at (when it crosses it). */
    threshold: z.int().min(1).max(1_000_000).optional(),
  })
  .check((context) => {
    const needsThreshold = context.value.events.some((event) => THRESHOLD_EVENTS.has(event));
    if (needsThreshold && context.value.threshold === undefined) {
      context.issues.push({
        code: 'custom',
        message: '`threshold` is required with cluster.threshold or error.rate',
        path: ['threshold'],
        input: context.value,
      });
    }
  });

const customSourceSchema = z.strictObject({
  type: z.literal('custom'),
  /** The `track()` name to match (exact). */
  name: filterText,
  /** Properties the event must carry with these exact values. */
  properties: z
    .record(z.string().min(1).max(128), propertyValueSchema)
    .refine((properties) => Object.keys(properties).length <= 20, 'at most 20 properties')
    .optional(),
  /** Only events at least this severe (an event without a severity counts as `info`). */
  minSeverity: severitySchema.optional(),
  environment: filterText.optional(),
  release: filterText.optional(),
});

const securitySourceSchema = z.strictObject({
  type: z.literal('security'),
  /** Which security events notify; all of them when absent. */
  events: z.array(z.enum(SECURITY_EVENT_TYPES)).min(1).max(SECURITY_EVENT_TYPES.length).optional(),
});

const regressionSourceSchema = z.strictObject({
  type: z.literal('regression'),
  /** Which regressions notify; both without `events`. */
  events: z.array(z.enum(REGRESSION_EVENT_TYPES)).min(1).max(REGRESSION_EVENT_TYPES.length).optional(),
  /** Only regressions of these metrics; all without `metrics`. */
  metrics: z.array(z.enum(REGRESSION_METRICS)).min(1).max(REGRESSION_METRICS.length).optional(),
  /** Only regressions of releases in this environment / of this release (exact). */
  environment: filterText.optional(),
  release: filterText.optional(),
});

const aiSourceSchema = z.strictObject({
  type: z.literal('ai'),
  /** Which AI events notify; all three without `events`. */
  events: z.array(z.enum(AI_EVENT_TYPES)).min(1).max(AI_EVENT_TYPES.length).optional(),
});

const accountSourceSchema = z.strictObject({
  type: z.literal('account'),
  /** Which account events notify; both without `events`. */
  events: z.array(z.enum(ACCOUNT_EVENT_TYPES)).min(1).max(ACCOUNT_EVENT_TYPES.length).optional(),
});

/**
 * What a rule listens to: cluster transitions (with kind, severity, environment and release
 * filters, and a `count24h` threshold), custom `track()` events by name and properties, or
 * security events (all of them, or the listed ones), or regressions (of releases and of routes'
 * web vitals, by metric, environment and release), or AI events (digests, anomalies, deep
 * analyses ready; all of them, or the listed ones), or account events (usage thresholds, billing
 * changes; both, or the listed ones).
 *
 * @example
 * ```ts
 * ruleSourceSchema.parse({ type: 'cluster', events: ['cluster.created'], kinds: ['webrtc_one_way_media'] });
 * ruleSourceSchema.parse({ type: 'custom', name: 'checkout_failed', properties: { plan: 'pro' } });
 * ruleSourceSchema.parse({ type: 'security', events: ['security.token_created'] });
 * ruleSourceSchema.parse({ type: 'regression', events: ['release.regression'], environment: 'production' });
 * ruleSourceSchema.parse({ type: 'ai', events: ['ai.anomaly'] });
 * ruleSourceSchema.parse({ type: 'account', events: ['usage.threshold'] });
 * ```
 */
export const ruleSourceSchema = z.discriminatedUnion('type', [
  clusterSourceSchema,
  customSourceSchema,
  securitySourceSchema,
  regressionSourceSchema,
  aiSourceSchema,
  accountSourceSchema,
]);
export type RuleSource = z.infer<typeof ruleSourceSchema>;

/** What caused a notification, as rules see it. */
export type RuleSubject =
  | {
      type: ClusterRuleEvent;
      kind: string;
      severity: Severity;
      environment: string | null;
      release: string | null;
      /** `count24h` before and after the occurrences that caused this (threshold events). */
      count24hBefore: number;
      count24hAfter: number;
    }
  | {
      type: 'custom';
      name: string;
      properties: Readonly<Record<string, string | number | boolean>>;
      severity: Severity | null;
      environment: string | null;
      release: string | null;
    }
  | {
      /** A security event (no environment, release or severity filters apply). */
      type: SecurityEventType;
    }
  | {
      /**
       * A regression: of a release (its environment and release), or of a route's web vital
       * (over every environment: environment and release null).
       */
      type: RegressionEventType;
      metric: RegressionMetric;
      environment: string | null;
      release: string | null;
    }
  | {
      /** An AI event (no environment, release or severity filters apply). */
      type: AiEventType;
    }
  | {
      /** An account event (no environment, release or severity filters apply). */
      type: AccountEventType;
    };

type SecuritySubject = Extract<RuleSubject, { type: SecurityEventType }>;
type RegressionSubject = Extract<RuleSubject, { type: RegressionEventType }>;
type AiSubject = Extract<RuleSubject, { type: AiEventType }>;
type AccountSubject = Extract<RuleSubject, { type: AccountEventType }>;

/** Whether a subject is a security event. */
function isSecuritySubject(subject: RuleSubject): subject is SecuritySubject {
  return SECURITY_EVENTS.has(subject.type);
}

/** Whether a subject is a regression. */
function isRegressionSubject(subject: RuleSubject): subject is RegressionSubject {
  return REGRESSION_EVENTS.has(subject.type);
}

/** Whether a subject is an AI event. */
function isAiSubject(subject: RuleSubject): subject is AiSubject {
  return AI_EVENTS.has(subject.type);
}

/** Whether a subject is an account event. */
function isAccountSubject(subject: RuleSubject): subject is AccountSubject {
  return ACCOUNT_EVENTS.has(subject.type);
}

/** `severity` is at least `minimum`. */
function atLeast(severity: Severity, minimum: Severity): boolean {
  return SEVERITY_ORDER.indexOf(severity) >= SEVERITY_ORDER.indexOf(minimum);
}

/**
 * Whether a rule's source matches a subject. Threshold events match when `count24h` crossed the
 * rule's threshold with this change (before < threshold ≤ after), so a rule fires once per rise.
 * A `security` source matches only security events (the listed ones, or all without `events`);
 * cluster and custom sources never match them. A `regression` source matches only regressions
 * (of its `events` and `metrics` when listed, in its environment and release when given). An
 * `ai` source matches only AI events (the listed ones, or all without `events`), and no other
 * source matches them; the same holds for `account` sources and account events.
 *
 * @example
 * ```ts
 * ruleMatches({ type: 'custom', name: 'paid' }, { type: 'custom', name: 'paid', properties: {}, severity: null, environment: null, release: null }); // true
 * ruleMatches({ type: 'security' }, { type: 'security.token_created' }); // true
 * ruleMatches({ type: 'regression' }, { type: 'vitals.regression', metric: 'LCP', environment: null, release: null }); // true
 * ruleMatches({ type: 'ai', events: ['ai.digest'] }, { type: 'ai.anomaly' }); // false
 * ```
 */
export function ruleMatches(source: RuleSource, subject: RuleSubject): boolean {
  if (source.type === 'security')
    return (
      isSecuritySubject(subject) && (source.events === undefined || source.events.includes(subject.type))
    );
  if (isSecuritySubject(subject)) return false;
  if (source.type === 'ai')
    return isAiSubject(subject) && (source.events === undefined || source.events.includes(subject.type));
  if (isAiSubject(subject)) return false;
  if (source.type === 'account')
    return isAccountSubject(subject) && (source.events === undefined || source.events.includes(subject.type));
  if (isAccountSubject(subject)) return false;
  if (source.type === 'regression')
    return (
      isRegressionSubject(subject) &&
      (source.events === undefined || source.events.includes(subject.type)) &&
      (source.metrics === undefined || source.metrics.includes(subject.metric)) &&
      (source.environment === undefined || source.environment === subject.environment) &&
      (source.release === undefined || source.release === subject.release)
    );
  if (isRegressionSubject(subject)) return false;
  if (source.environment !== undefined && source.environment !== subject.environment) return false;
  if (source.release !== undefined && source.release !== subject.release) return false;
  if (source.type === 'custom') {
    if (subject.type !== 'custom' || subject.name !== source.name) return false;
    if (source.minSeverity !== undefined && !atLeast(subject.severity ?? 'info', source.minSeverity))
      return false;
    return Object.entries(source.properties ?? {}).every(
      ([name, value]) => Object.hasOwn(subject.properties, name) && subject.properties[name] === value,
    );
  }
  if (subject.type === 'custom' || !source.events.includes(subject.type)) return false;
  if (source.kinds !== undefined && !(source.kinds as readonly string[]).includes(subject.kind)) return false;
  if (source.minSeverity !== undefined && !atLeast(subject.severity, source.minSeverity)) return false;
  if (THRESHOLD_EVENTS.has(subject.type)) {
    const threshold = source.threshold ?? Number.POSITIVE_INFINITY;
    return subject.count24hBefore < threshold && threshold <= subject.count24hAfter;
  }
  return true;
}
