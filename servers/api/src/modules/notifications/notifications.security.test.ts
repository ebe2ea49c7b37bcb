import { WEBHOOK_VERSION } from '@svc/protocol';
import { describe, expect, it } from 'vitest';
import type { Json } from '../../../test/http.ts';
import type { TestProject } from '../../../test/test-app.ts';
import { ENGINES } from '../../../test/test-database.ts';
import { notifySecurityEvent, type SecurityEvent, type SecurityNotifyResult } from './index.ts';
import { notificationsSuite, verified } from './notifications.fixture.ts';

// Security events (an API token created, SSO changed, break-glass access): always in the inbox,
// sent through `security` rules only, never throttled; the rules API for `security` sources.

/** A `security.token_created` event as the projects module would describe it. */
const tokenCreated = (name = 'ci'): SecurityEvent => ({
  type: 'security.token_created',
  data: {
    title: 'API token created',
    summary: `The API token "${name}" was created.`,
    severity: 'medium',
    counts: { tokens: 2 },
    links: { tokens: 'https://app.example.com/settings/tokens' },
  },
});

const ssoChanged: SecurityEvent = {
  type: 'security.sso_changed',
  data: {
    title: 'SSO settings changed',
    summary: 'The identity provider of the organization was changed.',
    severity: 'high',
    counts: {},
    links: {},
  },
};

describe.each(ENGINES)('security notifications on %s', (engine) => {
  const { suite, request, ok, worker, setUp, failingCallSession } = notificationsSuite(engine);

  /** `notifySecurityEvent` in a transaction of its own (the cause's, in the projects module). */
  const emit = (
    project: TestProject,
    event: SecurityEvent,
    now = new Date(),
  ): Promise<SecurityNotifyResult> =>
    suite.test.database.database
      .transaction()
      .execute((transaction) => notifySecurityEvent(transaction, project.project, event, now));

  const inbox = async (project: TestProject): Promise<Json[]> =>
    (await ok('GET', '/v1/inbox', undefined, project)).items;

  const outbox = (project: TestProject) =>
    suite.test.database.database
      .selectFrom('deliveries')
      .select(['event_id', 'event_type', 'channel_id', 'status'])
      .where('project_id', '=', project.project.id)
      .orderBy('channel_id')
      .execute();

  it('writes the event to the inbox without any rule, in the caller transaction', async () => {
    const project = await suite.test.createProject();
    // Another project's security rule and channel see nothing of it.
    const other = await suite.test.createProject();
    const otherChannel = await ok(
      'POST',
      '/v1/notifications/channels',
      { type: 'webhook', name: 'hooks', url: 'https://hooks.example.com/' },
      other,
    );
    await ok(
      'POST',
      '/v1/notifications/rules',
      { name: 'security', source: { type: 'security' }, channelIds: [otherChannel.channel.id] },
      other,
    );

    const now = new Date();
    const written = await emit(project, tokenCreated(), now);
    expect(written).toEqual({ eventId: expect.stringMatching(/^evt_/), deliveries: 0 });
    expect(await inbox(project)).toEqual([
      {
        id: written.eventId,
        type: 'security.token_created',
        severity: 'medium',
        title: 'API token created',
        summary: 'The API token "ci" was created.',
        createdAt: now.toISOString(),
        data: tokenCreated().data,
      },
    ]);
    const row = await suite.test.database.database
      .selectFrom('notification_events')
      .selectAll()
      .where('project_id', '=', project.project.id)
      .where('id', '=', written.eventId)
      .executeTakeFirstOrThrow();
    expect(row).toMatchObject({ inbox: true, cluster_id: null, rule_ids: [] });
    expect(await outbox(project)).toEqual([]);
    expect(await inbox(other)).toEqual([]);
    expect(await outbox(other)).toEqual([]);

    // It is written in the caller's transaction: rolled back with its cause.
    const rolledBack = suite.test.database.database.transaction().execute(async (transaction) => {
      await notifySecurityEvent(transaction, project.project, tokenCreated('lost'), new Date());
      throw new Error('the token could not be created');
    });
    await expect(rolledBack).rejects.toThrow('the token could not be created');
    // Data that is not a valid webhook payload throws (and so rolls its cause back).
    await expect(
      emit(project, { ...tokenCreated(), data: { ...tokenCreated().data, title: '' } }),
    ).rejects.toThrow();
    await expect(
      emit(project, {
        ...tokenCreated(),
        data: { ...tokenCreated().data, links: { tokens: 'javascript:alert(1)' } },
      }),
    ).rejects.toThrow();
    expect((await inbox(project)).map((item) => item.id)).toEqual([written.eventId]);
  });

  it('queues one delivery per channel of the matching security rules, with the exact envelope, never throttled', async () => {
    // A throttle on the rule does not hold security events back.
    const { project, channel, rule } = await setUp({
      source: { type: 'security' },
      throttleMinutes: 60,
    });
    const now = new Date();
    const written = await emit(project, tokenCreated(), now);
    expect(written.deliveries).toBe(1);
    expect(await outbox(project)).toEqual([
      {
        event_id: written.eventId,
        event_type: 'security.token_created',
        channel_id: channel.id,
        status: 'pending',
      },
    ]);
    const event = await suite.test.database.database
      .selectFrom('notification_events')
      .select('rule_ids')
      .where('project_id', '=', project.project.id)
      .where('id', '=', written.eventId)
      .executeTakeFirstOrThrow();
    expect(event.rule_ids).toEqual([rule.id]);

    expect(await worker().runUntilIdle()).toBe(1);
    const received = await suite.receiver.waitFor(() => true);
    expect(suite.receiver.rejected).toHaveLength(0);
    expect(verified(received)).toEqual({
      id: written.eventId,
      type: 'security.token_created',
      version: WEBHOOK_VERSION,
      createdAt: now.toISOString(),
      orgId: project.project.organization_id,
      projectId: project.project.id,
      data: tokenCreated().data,
    });

    // A second token a moment later is sent too (no throttle), as is SSO (all three without `events`).
    const second = await emit(project, tokenCreated('deploy'));
    const sso = await emit(project, ssoChanged);
    expect([second.deliveries, sso.deliveries]).toEqual([1, 1]);
    expect(await worker().runUntilIdle()).toBe(2);
    expect(suite.receiver.deliveries.map((delivery) => verified(delivery).data.summary).sort()).toEqual(
      [
        'The API token "ci" was created.',
        'The API token "deploy" was created.',
        ssoChanged.data.summary,
      ].sort(),
    );
    const delivered = await ok(
      'GET',
      '/v1/notifications/deliveries?eventType=security.token_created&status=delivered',
      undefined,
      project,
    );
    expect(delivered.items.map((item: Json) => item.eventId).sort()).toEqual(
      [written.eventId, second.eventId].sort(),
    );

    // Two rules sharing a channel, and a second channel: one delivery per channel.
    const extra = await ok(
      'POST',
      '/v1/notifications/channels',
      { type: 'webhook', name: 'more', url: 'https://hooks.example.com/security' },
      project,
    );
    await ok(
      'POST',
      '/v1/notifications/rules',
      {
        name: 'tokens',
        source: { type: 'security', events: ['security.token_created'] },
        channelIds: [channel.id, extra.channel.id],
      },
      project,
    );
    const third = await emit(project, tokenCreated('third'));
    expect(third.deliveries).toBe(2);
    expect(
      (await outbox(project))
        .filter((row) => row.event_id === third.eventId)
        .map((row) => row.channel_id)
        .sort(),
    ).toEqual([channel.id, extra.channel.id].sort());
    // Deleting the extra channel fails its delivery, so that no later worker run tries to reach it.
    await ok('DELETE', `/v1/notifications/channels/${extra.channel.id}`, undefined, project);
  });

  it('a rule filtered to other security events, disabled rules and disabled channels get nothing; the inbox still does', async () => {
    const { project, channel, rule } = await setUp({
      source: { type: 'security', events: ['security.sso_changed'] },
    });
    const token = await emit(project, tokenCreated());
    expect(token.deliveries).toBe(0);
    const sso = await emit(project, ssoChanged);
    expect(sso.deliveries).toBe(1);

    // The channel disabled: nothing queued for it.
    await ok('PATCH', `/v1/notifications/channels/${channel.id}`, { enabled: false }, project);
    expect((await emit(project, ssoChanged)).deliveries).toBe(0);
    await ok('PATCH', `/v1/notifications/channels/${channel.id}`, { enabled: true }, project);

    // The rule disabled: nothing queued, and the event names no rule.
    await ok('PATCH', `/v1/notifications/rules/${rule.id}`, { enabled: false }, project);
    const disabled = await emit(project, ssoChanged);
    expect(disabled.deliveries).toBe(0);
    const ruleIds = await suite.test.database.database
      .selectFrom('notification_events')
      .select('rule_ids')
      .where('project_id', '=', project.project.id)
      .where('id', '=', disabled.eventId)
      .executeTakeFirstOrThrow();
    expect(ruleIds.rule_ids).toEqual([]);

    expect((await outbox(project)).map((row) => row.event_id)).toEqual([sso.eventId]);
    await worker().runUntilIdle();
    expect(suite.receiver.deliveries.map((delivery) => verified(delivery).id)).toEqual([sso.eventId]);
    // Every one of them is in the inbox.
    expect((await inbox(project)).map((item) => item.type)).toEqual([
      'security.sso_changed',
      'security.sso_changed',
      'security.sso_changed',
      'security.token_created',
    ]);
  });

  it('cluster and custom rules never receive security events, nor security rules cluster events', async () => {
    const { project, channel } = await setUp({
      source: {
        type: 'cluster',
        events: ['cluster.created', 'cluster.regressed', 'cluster.reopened', 'error.new'],
      },
    });
    await ok(
      'POST',
      '/v1/notifications/rules',
      {
        name: 'custom',
        source: { type: 'custom', name: 'security.token_created' },
        channelIds: [channel.id],
        throttleMinutes: 0,
      },
      project,
    );
    const written = await emit(project, tokenCreated());
    expect(written.deliveries).toBe(0);
    expect(await outbox(project)).toEqual([]);
    expect((await inbox(project)).map((item) => item.id)).toEqual([written.eventId]);

    // A project whose only rule is a security rule: a new cluster notifies nothing.
    const secured = await suite.test.createProject();
    const hooks = await ok(
      'POST',
      '/v1/notifications/channels',
      { type: 'webhook', name: 'hooks', url: 'https://hooks.example.com/' },
      secured,
    );
    await ok(
      'POST',
      '/v1/notifications/rules',
      { name: 'security', source: { type: 'security' }, channelIds: [hooks.channel.id], throttleMinutes: 0 },
      secured,
    );
    await failingCallSession(secured);
    expect((await ok('GET', '/v1/issues', undefined, secured)).items).toHaveLength(1);
    expect(await inbox(secured)).toEqual([]);
    expect(await outbox(secured)).toEqual([]);
  });

  it('the rules API accepts and round-trips a security source, refuses unknown event names, and documents it', async () => {
    const project = await suite.test.createProject();
    const channel = await ok(
      'POST',
      '/v1/notifications/channels',
      { type: 'webhook', name: 'hooks', url: 'https://hooks.example.com/' },
      project,
    );
    const created = await request(
      'POST',
      '/v1/notifications/rules',
      {
        name: 'Security',
        source: { type: 'security', events: ['security.token_created', 'security.break_glass'] },
        channelIds: [channel.channel.id],
      },
      project,
    );
    expect(created.statusCode, created.body).toBe(201);
    const rule = created.json();
    expect(rule).toMatchObject({
      name: 'Security',
      enabled: true,
      source: { type: 'security', events: ['security.token_created', 'security.break_glass'] },
      channelIds: [channel.channel.id],
    });
    expect(await ok('GET', `/v1/notifications/rules/${rule.id}`, undefined, project)).toEqual(rule);

    // Without `events` (all of them); then changed to another source type and back.
    const all = await ok(
      'POST',
      '/v1/notifications/rules',
      { name: 'All security', source: { type: 'security' } },
      project,
    );
    expect(all.source).toEqual({ type: 'security' });
    expect((await ok('GET', `/v1/notifications/rules/${all.id}`, undefined, project)).source).toEqual({
      type: 'security',
    });
    const patched = await ok(
      'PATCH',
      `/v1/notifications/rules/${all.id}`,
      { source: { type: 'security', events: ['security.sso_changed'] } },
      project,
    );
    expect(patched.source).toEqual({ type: 'security', events: ['security.sso_changed'] });
    expect(
      (await ok('GET', '/v1/notifications/rules', undefined, project)).items.map((item: Json) => item.source),
    ).toEqual([rule.source, { type: 'security', events: ['security.sso_changed'] }]);

    for (const source of [
      { type: 'security', events: ['security.token_deleted'] },
      { type: 'security', events: ['cluster.created'] },
      { type: 'security', events: [] },
      { type: 'security', minSeverity: 'high' },
    ]) {
      const refused = await request('POST', '/v1/notifications/rules', { name: 'bad', source }, project);
      expect(refused.statusCode, JSON.stringify(source)).toBe(400);
      expect(refused.json()).toMatchObject({ code: 'invalid' });
    }
    const patchRefused = await request(
      'PATCH',
      `/v1/notifications/rules/${all.id}`,
      { source: { type: 'security', events: ['security.token_deleted'] } },
      project,
    );
    expect(patchRefused.statusCode).toBe(400);
    expect((await ok('GET', `/v1/notifications/rules/${all.id}`, undefined, project)).source).toEqual(
      patched.source,
    );

    // OpenAPI documents the security source with its event names.
    const document = (await suite.test.app.inject('/openapi.json')).json();
    const ruleBody = JSON.stringify(
      document.paths['/v1/notifications/rules'].post.requestBody.content['application/json'].schema,
    );
    for (const name of [
      '"security"',
      'security.token_created',
      'security.sso_changed',
      'security.break_glass',
      'privacy.leak_radar',
    ])
      expect(ruleBody).toContain(name);
  });
});
