import { WEBHOOK_VERSION } from '@svc/protocol';
import { describe, expect, it } from 'vitest';
import type { Json } from '../../../test/http.ts';
import type { TestProject } from '../../../test/test-app.ts';
import { ENGINES } from '../../../test/test-database.ts';
import { type AccountEvent, notifyAccountEvent } from './index.ts';
import { notificationsSuite, verified } from './notifications.fixture.ts';

// Account events (a usage threshold crossed, a subscription changed) are an organization's: they
// reach the inbox of each of its projects, and the channels of those projects' `account` rules.

const threshold: AccountEvent = {
  type: 'usage.threshold',
  data: {
    title: 'Sessions at 80 % of the monthly cap',
    summary: '8,000 of 10,000 sessions this month.',
    severity: 'medium',
    counts: { used: 8000, cap: 10000, percent: 80 },
    links: { usage: 'https://app.example.com/orgs/org_1/usage' },
  },
};

const billing: AccountEvent = {
  type: 'billing.event',
  data: {
    title: 'Subscription updated',
    summary: 'The plan is now team.',
    severity: 'info',
    counts: {},
    links: {},
  },
};

describe.each(ENGINES)('account notifications on %s', (engine) => {
  const { suite, ok, worker, setUp } = notificationsSuite(engine);

  /** A second project in the organization of `project`. */
  const sibling = (project: TestProject) =>
    suite.test.createProject('Sibling', { organizationId: project.project.organization_id });

  const inbox = async (project: TestProject): Promise<Json[]> =>
    (await ok('GET', '/v1/inbox', undefined, project)).items;

  const emit = (organizationId: string, event: AccountEvent, now = new Date()) =>
    suite.test.database.database
      .transaction()
      .execute((transaction) => notifyAccountEvent(transaction, organizationId, event, now));

  it("reaches every project's inbox of the organization, and the channels of matching account rules only", async () => {
    const { project, channel } = await setUp({ source: { type: 'account', events: ['usage.threshold'] } });
    const second = await sibling(project);
    const stranger = await suite.test.createProject();
    // A security rule of the same project never receives account events.
    await ok(
      'POST',
      '/v1/notifications/rules',
      { name: 'security', source: { type: 'security' }, channelIds: [channel.id] },
      project,
    );

    const now = new Date();
    const written = await emit(project.project.organization_id, threshold, now);
    expect(written).toHaveLength(2);
    const byProject = new Map(
      [project, second]
        .map((owner) => owner.project.id)
        .sort()
        .map((id, index) => [id, written[index]]),
    );
    expect(byProject.get(project.project.id)?.deliveries).toBe(1);
    expect(byProject.get(second.project.id)?.deliveries).toBe(0);
    for (const owner of [project, second]) {
      expect(await inbox(owner)).toEqual([
        expect.objectContaining({
          type: 'usage.threshold',
          title: threshold.data.title,
          data: threshold.data,
        }),
      ]);
    }
    expect(await inbox(stranger)).toEqual([]);

    expect(await worker().runUntilIdle()).toBe(1);
    const received = await suite.receiver.waitFor(() => true);
    expect(verified(received)).toEqual({
      id: byProject.get(project.project.id)?.eventId,
      type: 'usage.threshold',
      version: WEBHOOK_VERSION,
      createdAt: now.toISOString(),
      orgId: project.project.organization_id,
      projectId: project.project.id,
      data: threshold.data,
    });

    // The rule lists usage.threshold only: a billing event reaches the inboxes, not the channel.
    const changed = await emit(project.project.organization_id, billing);
    expect(changed.map((result) => result.deliveries)).toEqual([0, 0]);
    expect((await inbox(second)).map((item) => item.type)).toEqual(['billing.event', 'usage.threshold']);
  });

  it('an account rule without events takes both; a bad event throws and writes nothing', async () => {
    const { project } = await setUp({ source: { type: 'account' } });
    const written = await emit(project.project.organization_id, billing);
    expect(written.map((result) => result.deliveries)).toEqual([1]);
    await expect(
      emit(project.project.organization_id, { ...threshold, data: { ...threshold.data, title: '' } }),
    ).rejects.toThrow();
    await expect(
      emit(project.project.organization_id, {
        ...threshold,
        type: 'cluster.created',
      } as unknown as AccountEvent),
    ).rejects.toThrow();
    expect(await inbox(project)).toHaveLength(1);
    // An organization without projects records nothing.
    expect(await emit('org_without_projects', threshold)).toEqual([]);
    // The rules API round-trips the source and refuses unknown account events.
    const rules = await ok('GET', '/v1/notifications/rules', undefined, project);
    expect(rules.items.map((rule: Json) => rule.source)).toEqual([{ type: 'account' }]);
    const refused = await suite.test.app.inject({
      method: 'POST',
      url: '/v1/notifications/rules',
      headers: project.headers,
      payload: { name: 'x', source: { type: 'account', events: ['usage.unknown'] }, channelIds: [] },
    });
    expect(refused.statusCode).toBe(400);
  });
});
