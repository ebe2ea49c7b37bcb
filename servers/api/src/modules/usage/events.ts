import type { ThresholdReached } from './caps.ts';

const WHAT = {
  sessions: { name: 'Sessions', unit: 'sessions this month' },
  storedBytes: { name: 'Stored data', unit: 'bytes stored' },
  aiTokens: { name: 'AI tokens', unit: 'AI tokens this month' },
} as const;

const CONSEQUENCE = {
  sessions:
    'New sessions are not recorded until the cap is raised or the month ends; sessions in progress finish.',
  storedBytes:
    'New sessions are not recorded until the cap is raised or data is deleted; sessions in progress finish.',
  aiTokens: 'The AI features answer without the model until the cap is raised or the month ends.',
} as const;

/**
 * The `usage.threshold` event of a threshold reached: what, how much of the cap, what follows
 * at 100 %, and a link to the organization's usage.
 *
 * @example
 * ```ts
 * usageThresholdEvent('org_1', { metric: 'sessions', percent: 80, used: 8000, cap: 10000 }, 'https://app.example.com');
 * // { type: 'usage.threshold', data: { title: 'Sessions at 80 % of the monthly cap', … } }
 * ```
 */
export function usageThresholdEvent(organizationId: string, reached: ThresholdReached, appUrl: string) {
  const what = WHAT[reached.metric];
  const full = reached.percent >= 100;
  const amounts = `${reached.used.toLocaleString('en-US')} of ${reached.cap.toLocaleString('en-US')} ${what.unit}`;
  return {
    type: 'usage.threshold' as const,
    data: {
      title: full ? `${what.name}: the cap is reached` : `${what.name} at ${reached.percent} % of the cap`,
      summary: full ? `${amounts}. ${CONSEQUENCE[reached.metric]}` : `${amounts}.`,
      severity: full ? ('high' as const) : ('medium' as const),
      counts: { used: reached.used, cap: reached.cap, percent: reached.percent },
      links: { usage: `${appUrl}/orgs/${organizationId}/usage` },
    },
  };
}
