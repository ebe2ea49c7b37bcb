import { describe, expect, it } from 'vitest';
import { type RuleSource, type RuleSubject, ruleMatches, ruleSourceSchema } from './rules.ts';

const cluster = (overrides: Partial<Extract<RuleSubject, { kind: string }>> = {}): RuleSubject => ({
  type: 'cluster.created',
  kind: 'webrtc_one_way_media',
  severity: 'critical',
  environment: 'production',
  release: '2.0.0',
  count24hBefore: 0,
  count24hAfter: 1,
  ...overrides,
});

const custom = (overrides: Partial<Extract<RuleSubject, { type: 'custom' }>> = {}): RuleSubject => ({
  type: 'custom',
  name: 'checkout_failed',
  properties: { plan: 'pro', amount: 49, trial: false },
  severity: null,
  environment: 'production',
  release: '2.0.0',
  ...overrides,
});

const source = (value: unknown): RuleSource => ruleSourceSchema.parse(value);

describe('ruleMatches', () => {
  it('matches cluster events by type, kind, minimum severity, environment and release', () => {
    const rule = source({
      type: 'cluster',
      events: ['cluster.created', 'cluster.regressed'],
      kinds: ['webrtc_one_way_media', 'error'],
      minSeverity: 'high',
      environment: 'production',
      release: '2.0.0',
    });
    expect(ruleMatches(rule, cluster())).toBe(true);
    expect(ruleMatches(rule, cluster({ type: 'cluster.regressed' }))).toBe(true);
    expect(ruleMatches(rule, cluster({ type: 'cluster.reopened' }))).toBe(false);
    expect(ruleMatches(rule, cluster({ kind: 'webrtc_freeze' }))).toBe(false);
    expect(ruleMatches(rule, cluster({ kind: 'error', severity: 'high' }))).toBe(true);
    expect(ruleMatches(rule, cluster({ severity: 'medium' }))).toBe(false);
    expect(ruleMatches(rule, cluster({ environment: 'staging' }))).toBe(false);
    expect(ruleMatches(rule, cluster({ environment: null }))).toBe(false);
    expect(ruleMatches(rule, cluster({ release: '2.0.1' }))).toBe(false);
    expect(
      ruleMatches(
        source({ type: 'cluster', events: ['cluster.created'] }),
        cluster({ environment: null, release: null }),
      ),
    ).toBe(true);
  });

  it('fires threshold events once per rise: when count24h crosses the threshold', () => {
    const rule = source({ type: 'cluster', events: ['cluster.threshold', 'error.rate'], threshold: 10 });
    const crossing = (
      before: number,
      after: number,
      type: 'cluster.threshold' | 'error.rate' = 'cluster.threshold',
    ) => ruleMatches(rule, cluster({ type, count24hBefore: before, count24hAfter: after }));
    expect(crossing(9, 10)).toBe(true);
    expect(crossing(3, 12, 'error.rate')).toBe(true);
    expect(crossing(10, 11)).toBe(false);
    expect(crossing(8, 9)).toBe(false);
  });

  it('matches custom events by name, exact properties and severity (none counts as info)', () => {
    expect(ruleMatches(source({ type: 'custom', name: 'checkout_failed' }), custom())).toBe(true);
    expect(ruleMatches(source({ type: 'custom', name: 'checkout' }), custom())).toBe(false);
    const pro = source({
      type: 'custom',
      name: 'checkout_failed',
      properties: { plan: 'pro', trial: false },
    });
    expect(ruleMatches(pro, custom())).toBe(true);
    expect(ruleMatches(pro, custom({ properties: { plan: 'pro' } }))).toBe(false);
    expect(ruleMatches(pro, custom({ properties: { plan: 'pro', trial: 'false' } }))).toBe(false);
    const amount = source({ type: 'custom', name: 'checkout_failed', properties: { amount: 49 } });
    expect(ruleMatches(amount, custom({ properties: { amount: '49' } }))).toBe(false);
    const severe = source({ type: 'custom', name: 'checkout_failed', minSeverity: 'low' });
    expect(ruleMatches(severe, custom())).toBe(false);
    expect(ruleMatches(severe, custom({ severity: 'low' }))).toBe(true);
    expect(
      ruleMatches(source({ type: 'custom', name: 'checkout_failed', minSeverity: 'info' }), custom()),
    ).toBe(true);
    // A custom rule never matches cluster events, nor a cluster rule custom events.
    expect(ruleMatches(source({ type: 'custom', name: 'checkout_failed' }), cluster())).toBe(false);
    expect(ruleMatches(source({ type: 'cluster', events: ['cluster.created'] }), custom())).toBe(false);
  });

  it('matches security events by type (all of them without `events`), and nothing else', () => {
    const all = source({ type: 'security' });
    const sso = source({ type: 'security', events: ['security.sso_changed'] });
    for (const type of [
      'security.token_created',
      'security.sso_changed',
      'security.break_glass',
      'privacy.leak_radar',
    ] as const) {
      expect(ruleMatches(all, { type }), type).toBe(true);
      expect(ruleMatches(sso, { type }), type).toBe(type === 'security.sso_changed');
    }
    // A security rule never matches cluster or custom events, nor they security events.
    expect(ruleMatches(all, cluster())).toBe(false);
    expect(ruleMatches(all, custom())).toBe(false);
    const token = { type: 'security.token_created' } as const;
    expect(
      ruleMatches(
        source({ type: 'cluster', events: ['cluster.created', 'cluster.regressed', 'error.new'] }),
        token,
      ),
    ).toBe(false);
    expect(ruleMatches(source({ type: 'custom', name: 'security.token_created' }), token)).toBe(false);
  });

  it('matches regressions by type, metric, environment and release, and nothing else', () => {
    const releaseRegression = {
      type: 'release.regression',
      metric: 'error_rate',
      environment: 'production',
      release: '2.0.0',
    } as const;
    const vitalsRegression = {
      type: 'vitals.regression',
      metric: 'LCP',
      environment: null,
      release: null,
    } as const;
    const all = source({ type: 'regression' });
    expect(ruleMatches(all, releaseRegression)).toBe(true);
    expect(ruleMatches(all, vitalsRegression)).toBe(true);
    const releases = source({
      type: 'regression',
      events: ['release.regression'],
      environment: 'production',
    });
    expect(ruleMatches(releases, releaseRegression)).toBe(true);
    expect(ruleMatches(releases, { ...releaseRegression, environment: 'staging' })).toBe(false);
    expect(ruleMatches(releases, vitalsRegression)).toBe(false);
    const lcp = source({ type: 'regression', metrics: ['LCP', 'call_quality'] });
    expect(ruleMatches(lcp, vitalsRegression)).toBe(true);
    expect(ruleMatches(lcp, { ...vitalsRegression, metric: 'CLS' })).toBe(false);
    expect(ruleMatches(lcp, releaseRegression)).toBe(false);
    expect(ruleMatches(source({ type: 'regression', release: '2.0.0' }), releaseRegression)).toBe(true);
    expect(ruleMatches(source({ type: 'regression', release: '1.0.0' }), releaseRegression)).toBe(false);
    // A regression rule never matches other events, nor other rules regressions.
    expect(ruleMatches(all, cluster())).toBe(false);
    expect(ruleMatches(all, custom())).toBe(false);
    expect(ruleMatches(all, { type: 'security.token_created' })).toBe(false);
    expect(ruleMatches(source({ type: 'security' }), releaseRegression)).toBe(false);
    expect(ruleMatches(source({ type: 'custom', name: 'release.regression' }), releaseRegression)).toBe(
      false,
    );
    expect(
      ruleMatches(
        source({ type: 'cluster', events: ['cluster.created', 'cluster.regressed', 'error.new'] }),
        releaseRegression,
      ),
    ).toBe(false);
  });

  it('matches AI events by type (all three without `events`), and nothing else', () => {
    const all = source({ type: 'ai' });
    const anomalies = source({ type: 'ai', events: ['ai.anomaly'] });
    for (const type of ['ai.digest', 'ai.anomaly', 'ai.deep_analysis_ready'] as const) {
      expect(ruleMatches(all, { type }), type).toBe(true);
      expect(ruleMatches(anomalies, { type }), type).toBe(type === 'ai.anomaly');
    }
    // An AI rule never matches other events, nor other rules AI events.
    const digest = { type: 'ai.digest' } as const;
    expect(ruleMatches(all, cluster())).toBe(false);
    expect(ruleMatches(all, custom())).toBe(false);
    expect(ruleMatches(all, { type: 'security.token_created' })).toBe(false);
    expect(
      ruleMatches(all, {
        type: 'release.regression',
        metric: 'error_rate',
        environment: null,
        release: null,
      }),
    ).toBe(false);
    expect(ruleMatches(source({ type: 'security' }), digest)).toBe(false);
    expect(ruleMatches(source({ type: 'regression' }), digest)).toBe(false);
    expect(ruleMatches(source({ type: 'custom', name: 'ai.digest' }), digest)).toBe(false);
    expect(
      ruleMatches(
        source({ type: 'cluster', events: ['cluster.created', 'cluster.regressed', 'error.new'] }),
        digest,
      ),
    ).toBe(false);
  });

  it('refuses sources that could never work', () => {
    for (const bad of [
      { type: 'cluster', events: [] },
      { type: 'cluster', events: ['cluster.threshold'] },
      { type: 'cluster', events: ['error.rate'], threshold: 0 },
      { type: 'cluster', events: ['cluster.created'], kinds: ['webrtc_nope'] },
      { type: 'cluster', events: ['cluster.created'], extra: true },
      { type: 'custom', name: '' },
      { type: 'custom', name: 'x', properties: { nested: { a: 1 } } },
      { type: 'email' },
      { type: 'security', events: [] },
      { type: 'security', events: ['security.token_deleted'] },
      { type: 'security', events: ['cluster.created'] },
      { type: 'security', minSeverity: 'high' },
      { type: 'regression', events: [] },
      { type: 'regression', events: ['cluster.created'] },
      { type: 'regression', metrics: ['bounce_rate'] },
      { type: 'regression', threshold: 3 },
      { type: 'ai', events: [] },
      { type: 'ai', events: ['ai.summary'] },
      { type: 'ai', events: ['cluster.created'] },
      { type: 'ai', metrics: ['error_rate'] },
    ]) {
      expect(ruleSourceSchema.safeParse(bad).success, JSON.stringify(bad)).toBe(false);
    }
  });
});
