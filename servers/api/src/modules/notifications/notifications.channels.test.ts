import { describe, expect, it } from 'vitest';
import type { Json } from '../../../test/http.ts';
import { ENGINES } from '../../../test/test-database.ts';
import { notificationsSuite, verified } from './notifications.fixture.ts';
import { MAX_CHANNELS } from './routes.ts';

// Channels and the API around them: the secret rotation window, validation of channels and
// rules, secrets kept out of reads, the channel limit, and every resource scoped to its project.

describe.each(ENGINES)('issues and notifications on %s', (engine) => {
  const { suite, request, ok, worker, setUp, failingCallSession } = notificationsSuite(engine);

  it('the rotation window signs with both secrets for 24 h, then with the new one', async () => {
    const {
      project,
      channel,
      secret: oldSecret,
    } = await setUp({
      source: { type: 'cluster', events: ['cluster.created', 'cluster.threshold'], threshold: 2 },
    });
    const rotated = await ok(
      'POST',
      `/v1/notifications/channels/${channel.id}/rotate-secret`,
      undefined,
      project,
    );
    expect(rotated.secret).toMatch(/^whsec_/);
    expect(rotated.secret).not.toBe(oldSecret);
    expect(Date.parse(rotated.channel.previousSecretExpiresAt) - Date.now()).toBeGreaterThan(
      23.9 * 3600 * 1000,
    );

    // A suite.receiver still on the old secret accepts deliveries in the window, as does one on the new.
    suite.receiver.setSecrets(oldSecret);
    await failingCallSession(project);
    await worker().runUntilIdle();
    const first = await suite.receiver.waitFor(() => true);
    expect(first.signature.match(/v1=/g)).toHaveLength(2);
    suite.receiver.setSecrets(rotated.secret);
    await failingCallSession(project);
    suite.clock = Date.now() + 25 * 3600 * 1000;
    await worker().runUntilIdle();
    const second = await suite.receiver.waitFor((delivery) => delivery.event.type === 'cluster.threshold');
    expect(second.signature.match(/v1=/g)).toHaveLength(1);
    expect(suite.receiver.rejected).toHaveLength(0);

    // A test notification after the window: the old secret alone no longer verifies.
    suite.receiver.setSecrets(oldSecret);
    const queued = await ok('POST', `/v1/notifications/channels/${channel.id}/test`, undefined, project);
    await worker().runUntilIdle();
    expect(suite.receiver.rejected).toHaveLength(1);
    // The worker's suite.clock is past this delivery's 24 h window too, so it is not retried: replay it.
    const state = await ok('GET', `/v1/notifications/deliveries/${queued.deliveryId}`, undefined, project);
    expect(state).toMatchObject({ status: 'failed', lastStatus: 400 });
    suite.receiver.setSecrets(rotated.secret);
    await ok('POST', `/v1/notifications/deliveries/${queued.deliveryId}/replay`, undefined, project);
    await worker().runUntilIdle();
    const test_ = await suite.receiver.waitFor((delivery) => delivery.event.type === 'notification.test');
    expect(verified(test_)).toMatchObject({ id: queued.eventId, data: { severity: 'info' } });
    // A test notification is not in the inbox.
    expect(
      (await ok('GET', '/v1/inbox', undefined, project)).items.some(
        (item: Json) => item.type === 'notification.test',
      ),
    ).toBe(false);
  });

  it('validates channels and rules, keeps secrets out of reads, and scopes everything to the project', async () => {
    const owner = await suite.test.createProject();
    const other = await suite.test.createProject();
    const bad = async (url: string, body: unknown, status = 400) => {
      const response = await request('POST', url, body, owner);
      expect(response.statusCode, response.body).toBe(status);
      expect(response.json()).toMatchObject({ code: status === 404 ? 'not_found' : 'invalid' });
    };
    await bad('/v1/notifications/channels', { type: 'webhook', name: 'x', url: 'ftp://example.com' });
    await bad('/v1/notifications/channels', {
      type: 'webhook',
      name: 'x',
      url: 'https://user:pw@example.com/',
    });
    await bad('/v1/notifications/channels', { type: 'email', name: 'x', url: 'https://example.com/' });
    await bad('/v1/notifications/rules', {
      name: 'x',
      source: { type: 'cluster', events: ['cluster.threshold'] },
    });
    await bad('/v1/notifications/rules', {
      name: 'x',
      source: { type: 'cluster', events: ['cluster.created'], kinds: ['nope'] },
    });
    await bad('/v1/notifications/rules', { name: 'x', source: { type: 'custom' } });

    const created = await ok(
      'POST',
      '/v1/notifications/channels',
      { type: 'webhook', name: 'hooks', url: 'https://hooks.example.com/x' },
      owner,
    );
    expect(created.secret).toMatch(/^whsec_[0-9a-z]{52}$/);
    const read = await ok('GET', `/v1/notifications/channels/${created.channel.id}`, undefined, owner);
    expect(JSON.stringify(read)).not.toContain(created.secret);
    const stored = await suite.test.database.database
      .selectFrom('notification_channels')
      .select('sealed_secret')
      .where('id', '=', created.channel.id)
      .executeTakeFirstOrThrow();
    expect(Buffer.from(stored.sealed_secret).includes(Buffer.from(created.secret.slice(6)))).toBe(false);

    // Another project's channel is not found, and cannot be routed to.
    expect(
      (await request('GET', `/v1/notifications/channels/${created.channel.id}`, undefined, other)).statusCode,
    ).toBe(404);
    const foreign = await request(
      'POST',
      '/v1/notifications/rules',
      {
        name: 'x',
        source: { type: 'cluster', events: ['cluster.created'] },
        channelIds: [created.channel.id],
      },
      other,
    );
    expect(foreign.statusCode, foreign.body).toBe(400);

    const rule = await ok(
      'POST',
      '/v1/notifications/rules',
      {
        name: 'calls',
        source: { type: 'cluster', events: ['cluster.created'], minSeverity: 'high' },
        channelIds: [created.channel.id],
      },
      owner,
    );
    expect(rule).toMatchObject({ enabled: true, throttleMinutes: 60, channelIds: [created.channel.id] });
    expect((await ok('GET', '/v1/notifications/rules', undefined, owner)).items).toHaveLength(1);
    expect((await ok('GET', '/v1/notifications/rules', undefined, other)).items).toHaveLength(0);
    expect((await request('DELETE', `/v1/notifications/rules/${rule.id}`, undefined, other)).statusCode).toBe(
      404,
    );

    // Deleting the channel fails its pending deliveries and unroutes the rule.
    const queued = await ok(
      'POST',
      `/v1/notifications/channels/${created.channel.id}/test`,
      undefined,
      owner,
    );
    await ok('DELETE', `/v1/notifications/channels/${created.channel.id}`, undefined, owner);
    expect((await ok('GET', `/v1/notifications/rules/${rule.id}`, undefined, owner)).channelIds).toEqual([]);
    expect(
      await ok('GET', `/v1/notifications/deliveries/${queued.deliveryId}`, undefined, owner),
    ).toMatchObject({
      status: 'failed',
      lastError: 'The channel was deleted',
    });
    await ok('DELETE', `/v1/notifications/rules/${rule.id}`, undefined, owner);

    // A project has at most MAX_CHANNELS channels: the next is a 409 that creates nothing.
    const fresh = await suite.test.createProject();
    for (let index = 0; index < MAX_CHANNELS; index += 1)
      await ok(
        'POST',
        '/v1/notifications/channels',
        { type: 'webhook', name: `c${index}`, url: 'https://hooks.example.com/x' },
        fresh,
      );
    const full = await request(
      'POST',
      '/v1/notifications/channels',
      { type: 'webhook', name: 'one more', url: 'https://hooks.example.com/x' },
      fresh,
    );
    expect(full.statusCode, full.body).toBe(409);
    expect(full.json()).toMatchObject({
      code: 'invalid',
      error: `A project has at most ${MAX_CHANNELS} channels`,
    });
    expect((await ok('GET', '/v1/notifications/channels', undefined, fresh)).items).toHaveLength(
      MAX_CHANNELS,
    );
    expect(
      (await request('GET', '/v1/issues', undefined, { ...owner, headers: { authorization: 'Bearer nope' } }))
        .statusCode,
    ).toBe(401);
  });
});
