import { z } from 'zod';

// The plans and what each allows (servers/api/README.md, Billing). `null` is "no limit". The
// usage module meters and caps against these; retention days are what the retention sweep keeps.

/** The plans, cheapest first. */
export const PLANS = ['free', 'team', 'business', 'enterprise'] as const;

/** A plan's name. */
export type PlanName = (typeof PLANS)[number];

export const planNameSchema = z.enum(PLANS);

const limitSchema = z.int().min(0).max(Number.MAX_SAFE_INTEGER).nullable();

/** What a plan allows; `null` is no limit. */
export const planLimitsSchema = z.strictObject({
  /** Recorded sessions a calendar month (UTC). */
  sessionsPerMonth: limitSchema,
  /** Tracked WebRTC calls a calendar month (UTC). */
  callsPerMonth: limitSchema,
  /** Bytes stored (chunks, source maps, archived assets) at any time. */
  storedBytes: limitSchema,
  /** Model tokens (input and output) a calendar month (UTC). */
  aiTokensPerMonth: limitSchema,
  /** How long data is kept, in days. */
  retentionDays: z.strictObject({
    sessions: z.int().min(1).max(3650),
    calls: z.int().min(1).max(3650),
    traces: z.int().min(1).max(3650),
  }),
  /** Members of the organization (invitations included). */
  seats: limitSchema,
  /** Projects of the organization. */
  projects: limitSchema,
});

/** What a plan allows; `null` is no limit. */
export type PlanLimits = z.infer<typeof planLimitsSchema>;

const GIB = 1024 ** 3;

const PLAN_LIMITS: Readonly<Record<PlanName, PlanLimits>> = {
  free: {
    sessionsPerMonth: 5_000,
    callsPerMonth: 1_000,
    storedBytes: 1 * GIB,
    aiTokensPerMonth: 100_000,
    retentionDays: { sessions: 30, calls: 30, traces: 14 },
    seats: 3,
    projects: 2,
  },
  team: {
    sessionsPerMonth: 50_000,
    callsPerMonth: 20_000,
    storedBytes: 50 * GIB,
    aiTokensPerMonth: 2_000_000,
    retentionDays: { sessions: 90, calls: 90, traces: 30 },
    seats: 25,
    projects: 10,
  },
  business: {
    sessionsPerMonth: 500_000,
    callsPerMonth: 200_000,
    storedBytes: 500 * GIB,
    aiTokensPerMonth: 20_000_000,
    retentionDays: { sessions: 365, calls: 365, traces: 90 },
    seats: null,
    projects: null,
  },
  enterprise: {
    sessionsPerMonth: null,
    callsPerMonth: null,
    storedBytes: null,
    aiTokensPerMonth: null,
    retentionDays: { sessions: 730, calls: 730, traces: 365 },
    seats: null,
    projects: null,
  },
};

/**
 * The limits of a plan as sold (a license may carry its own, see `license.ts`).
 *
 * @example
 * ```ts
 * planLimits('team').sessionsPerMonth; // 50000
 * planLimits('enterprise').storedBytes; // null: no limit
 * ```
 */
export function planLimits(plan: PlanName): PlanLimits {
  const limits = PLAN_LIMITS[plan];
  return { ...limits, retentionDays: { ...limits.retentionDays } };
}

/**
 * Whether a text names a plan.
 *
 * @example
 * ```ts
 * isPlanName('team'); // true
 * isPlanName('gold'); // false
 * ```
 */
export function isPlanName(value: string): value is PlanName {
  return (PLANS as readonly string[]).includes(value);
}
