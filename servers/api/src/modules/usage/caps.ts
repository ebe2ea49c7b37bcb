import { type Kysely, sql, type Transaction } from 'kysely';
import type { Database } from '../../platform/database/schema.ts';
import { CAPPED_METRICS, type CappedMetric, monthOf, nextMonth } from './metrics.ts';

type Executor = Kysely<Database> | Transaction<Database>;

/** Monthly caps by metric; null: no cap. */
export type Caps = Record<CappedMetric, number | null>;

/** No cap on anything. */
export const NO_CAPS: Caps = { sessions: null, storedBytes: null, aiTokens: null };

/** The plan's caps of an organization (from the license or the billing provider), passed in. */
export type PlanCaps = (organizationId: string) => Promise<Caps>;

/** The thresholds of a cap that send `usage.threshold`, in percent. */
const THRESHOLDS = [80, 100] as const;

/**
 * How long after a cap is reached the sessions that had started before may still send chunks:
 * a session in progress finishes, but not for ever.
 */
export const SESSION_GRACE_MS = 60 * 60_000;

/** What an organization used this month of each capped metric (stored bytes: what is stored now). */
type CappedUsage = Record<CappedMetric, number>;

/** An organization's own caps (`PATCH /v1/orgs/{orgId}/billing/caps`); none set: {@link NO_CAPS}. */
export async function readCaps(executor: Executor, organizationId: string): Promise<Caps> {
  const row = await executor
    .selectFrom('usage_caps')
    .select(['sessions', 'stored_bytes', 'ai_tokens'])
    .where('organization_id', '=', organizationId)
    .executeTakeFirst();
  if (row === undefined) return NO_CAPS;
  return { sessions: row.sessions, storedBytes: row.stored_bytes, aiTokens: row.ai_tokens };
}

/**
 * The caps that apply: for each metric the lower of the organization's own cap and its plan's
 * (a null is no cap).
 *
 * @example
 * ```ts
 * effectiveCaps({ sessions: 5000, storedBytes: null, aiTokens: null }, { sessions: 10000, storedBytes: 1e9, aiTokens: null });
 * // { sessions: 5000, storedBytes: 1e9, aiTokens: null }
 * ```
 */
export function effectiveCaps(own: Caps, plan: Caps): Caps {
  const lower = (a: number | null, b: number | null) => (a === null ? b : b === null ? a : Math.min(a, b));
  return {
    sessions: lower(own.sessions, plan.sessions),
    storedBytes: lower(own.storedBytes, plan.storedBytes),
    aiTokens: lower(own.aiTokens, plan.aiTokens),
  };
}

/**
 * What the organization used of each capped metric: sessions and AI tokens in the UTC month of
 * `at`, stored bytes over all time (what is stored now: deletions are metered as negative).
 */
async function cappedUsage(executor: Executor, organizationId: string, at: Date): Promise<CappedUsage> {
  const row = await executor
    .selectFrom('usage_daily')
    .select([
      sql<number>`coalesce(sum(sessions) filter (where day >= ${monthOf(at)}::date), 0)::bigint`.as(
        'sessions',
      ),
      sql<number>`coalesce(sum(ai_tokens) filter (where day >= ${monthOf(at)}::date), 0)::bigint`.as(
        'ai_tokens',
      ),
      sql<number>`coalesce(sum(stored_bytes), 0)::bigint`.as('stored_bytes'),
    ])
    .where('organization_id', '=', organizationId)
    .executeTakeFirstOrThrow();
  return {
    sessions: Number(row.sessions),
    storedBytes: Math.max(0, Number(row.stored_bytes)),
    aiTokens: Number(row.ai_tokens),
  };
}

/** One capped metric's state. */
interface MetricState {
  used: number;
  cap: number | null;
  /** `used` in percent of `cap` (rounded down); null without a cap. */
  percent: number | null;
}

/** An organization's caps as ingest, the SDK configuration and the AI features read them. */
export interface CapState {
  organizationId: string;
  metrics: Record<CappedMetric, MetricState>;
  /**
   * New sessions are refused (sessions or stored bytes at their cap) since this instant: sessions
   * started before it may send chunks for {@link SESSION_GRACE_MS} more. Undefined: not refused.
   */
  refusedSince: Date | undefined;
  /** The AI token cap is reached: the model is not called for the organization. */
  aiRefused: boolean;
  /** When the month's caps start over (the first instant of the next UTC month). */
  resetsAt: Date;
}

/** A threshold reached just now (its row inserted by this call). */
export interface ThresholdReached {
  metric: CappedMetric;
  percent: (typeof THRESHOLDS)[number];
  used: number;
  cap: number;
}

/**
 * Reads an organization's caps and usage and records each threshold reached for the first time
 * this month (80 % and 100 % of each cap) in one transaction, calling `onReached` in it for each
 * (the `usage.threshold` event commits with its row, once per threshold per month). The 100 %
 * row's time is when new sessions started to be refused.
 *
 * @example
 * ```ts
 * const state = await evaluateCaps(database, 'org_1', new Date(), planCaps, async (transaction, reached) => { … });
 * if (state.refusedSince !== undefined) …
 * ```
 */
export async function evaluateCaps(
  database: Kysely<Database>,
  organizationId: string,
  at: Date,
  planCaps: PlanCaps,
  onReached: (transaction: Transaction<Database>, reached: ThresholdReached) => Promise<void>,
): Promise<CapState> {
  const plan = await planCaps(organizationId);
  const month = monthOf(at);
  return database.transaction().execute(async (transaction) => {
    const caps = effectiveCaps(await readCaps(transaction, organizationId), plan);
    const used = await cappedUsage(transaction, organizationId, at);
    const metrics = {} as Record<CappedMetric, MetricState>;
    for (const metric of Object.keys(CAPPED_METRICS) as CappedMetric[]) {
      const cap = caps[metric];
      metrics[metric] = {
        used: used[metric],
        cap,
        percent: cap === null ? null : cap === 0 ? 100 : Math.floor((used[metric] * 100) / cap),
      };
    }
    const reachedRows = new Map<string, Date>();
    const recorded = await transaction
      .selectFrom('usage_thresholds')
      .select(['metric', 'percent', 'reached_at'])
      .where('organization_id', '=', organizationId)
      .where('month', '=', sql<Date>`${month}::date`)
      .execute();
    for (const row of recorded) reachedRows.set(`${row.metric}:${row.percent}`, row.reached_at);
    for (const metric of Object.keys(metrics) as CappedMetric[]) {
      const { cap, percent } = metrics[metric];
      if (cap === null || percent === null) continue;
      for (const threshold of THRESHOLDS) {
        if (percent < threshold || reachedRows.has(`${metric}:${threshold}`)) continue;
        const inserted = await transaction
          .insertInto('usage_thresholds')
          .values({
            organization_id: organizationId,
            month,
            metric,
            percent: threshold,
            used: metrics[metric].used,
            cap,
            reached_at: at,
          })
          .onConflict((conflict) => conflict.doNothing())
          .returning('reached_at')
          .executeTakeFirst();
        if (inserted === undefined) continue;
        reachedRows.set(`${metric}:${threshold}`, inserted.reached_at);
        await onReached(transaction, { metric, percent: threshold, used: metrics[metric].used, cap });
      }
    }
    const atCap = (metric: CappedMetric) => {
      const { cap, used: amount } = metrics[metric];
      return cap !== null && amount >= cap;
    };
    const since = (['sessions', 'storedBytes'] as const)
      .filter(atCap)
      .map((metric) => reachedRows.get(`${metric}:100`) ?? at)
      .sort((a, b) => a.getTime() - b.getTime())[0];
    return {
      organizationId,
      metrics,
      refusedSince: since,
      aiRefused: atCap('aiTokens'),
      resetsAt: nextMonth(at),
    };
  });
}

/**
 * Whether the organization used its monthly AI token cap (its own, or its plan's when given):
 * the model is not called then. Undefined: not reached; else what was used of what cap.
 *
 * @example
 * ```ts
 * const reached = await aiTokenCapReached(database, 'org_1', new Date());
 * if (reached !== undefined) return { allowed: false, reason: `…${reached.used} of ${reached.cap}…` };
 * ```
 */
export async function aiTokenCapReached(
  executor: Executor,
  organizationId: string,
  at: Date,
  planCaps: PlanCaps = async () => NO_CAPS,
): Promise<{ used: number; cap: number } | undefined> {
  const cap = effectiveCaps(
    await readCaps(executor, organizationId),
    await planCaps(organizationId),
  ).aiTokens;
  if (cap === null) return undefined;
  const used = (await cappedUsage(executor, organizationId, at)).aiTokens;
  return used >= cap ? { used, cap } : undefined;
}
