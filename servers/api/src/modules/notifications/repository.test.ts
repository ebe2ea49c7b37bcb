import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deleteWhileLocked } from '../../../test/row-lock.ts';
import { createTestApp, type TestApp, type TestProject } from '../../../test/test-app.ts';
import { ENGINES } from '../../../test/test-database.ts';
import { createId } from '../../platform/ids.ts';
import { acknowledgeInboxEvent } from './inbox-repository.ts';
import {
  deleteChannel,
  deleteRule,
  findChannel,
  findRule,
  insertChannel,
  insertRule,
  queueReplay,
  rotateChannelSecret,
  updateChannel,
  updateRule,
} from './repository.ts';

// The storage of notifications answers `undefined` for a row that is not there (any more, or not
// in the project), and the routes answer that with a 404 `{ error, code: 'not_found' }`: a channel
// or rule deleted between two requests, or while one runs, is never a masked 500.

type Method = 'GET' | 'POST' | 'PATCH' | 'DELETE';

const CLUSTER_SOURCE = { type: 'cluster', events: ['cluster.created'] };

/** Bytes as hex (PGlite answers bytea as Uint8Array, pg as Buffer). */
const hex = (bytes: Uint8Array | null | undefined) => (bytes ? Buffer.from(bytes).toString('hex') : bytes);

describe.each(ENGINES)('notification storage on %s', (engine) => {
  let test: TestApp;

  beforeAll(async () => {
    test = await createTestApp(engine);
  });
  afterAll(async () => {
    await test?.close();
  });

  const request = (project: TestProject, method: Method, url: string, body?: Record<string, unknown>) =>
    test.app.inject({
      method,
      url,
      headers: project.headers,
      ...(body === undefined ? {} : { payload: body }),
    });
  const created = async (project: TestProject, url: string, body: Record<string, unknown>) => {
    const response = await request(project, 'POST', url, body);
    expect(response.statusCode, response.body).toBe(201);
    return response.json();
  };
  const newChannel = (projectId: string) =>
    insertChannel(test.database.database, {
      projectId,
      id: createId('ch'),
      name: 'hooks',
      url: 'https://hooks.example.com/x',
      enabled: true,
      sealedSecret: randomBytes(40),
    });
  const newRule = (projectId: string, channelIds: string[]) =>
    insertRule(test.database.database, projectId, createId('rule'), {
      name: 'clusters',
      enabled: true,
      source: CLUSTER_SOURCE,
      channelIds,
      throttleMinutes: 60,
    });
  const rotation = () => ({
    sealedSecret: randomBytes(40),
    previousExpiresAt: new Date(Date.now() + 60_000),
  });

  it("changes and deletes a channel or rule in one statement: undefined when it is gone or another project's", async () => {
    const database = test.database.database;
    const { project } = await test.createProject();
    const { project: other } = await test.createProject();
    const now = new Date();
    const channel = await newChannel(project.id);
    const rule = await newRule(project.id, [channel.id]);

    // Another project reaches neither, and changes nothing.
    expect(await updateChannel(database, other.id, channel.id, { name: 'x' }, now)).toBeUndefined();
    expect(await rotateChannelSecret(database, other.id, channel.id, rotation(), now)).toBeUndefined();
    expect(await deleteChannel(database, other.id, channel.id, now)).toBeUndefined();
    expect(await updateRule(database, other.id, rule.id, { name: 'x' }, now)).toBeUndefined();
    expect(await deleteRule(database, other.id, rule.id)).toBeUndefined();
    expect(await findChannel(database, project.id, channel.id)).toEqual(channel);
    expect(await findRule(database, project.id, rule.id)).toEqual(rule);

    // The project's own: the rotation keeps the secret it replaces as the previous one.
    const secrets = rotation();
    const rotated = await rotateChannelSecret(database, project.id, channel.id, secrets, now);
    expect(hex(rotated?.sealed_secret)).toBe(hex(secrets.sealedSecret));
    expect(hex(rotated?.sealed_previous_secret)).toBe(hex(channel.sealed_secret));
    expect(rotated?.previous_secret_expires_at).toEqual(secrets.previousExpiresAt);
    expect(await updateRule(database, project.id, rule.id, { enabled: false }, now)).toMatchObject({
      id: rule.id,
      enabled: false,
      name: 'clusters',
    });

    // Deleted, they are gone for every change: undefined, no error.
    expect(await deleteRule(database, project.id, rule.id)).toEqual({ id: rule.id });
    expect(await deleteChannel(database, project.id, channel.id, now)).toEqual({ id: channel.id });
    expect(await updateChannel(database, project.id, channel.id, { enabled: false }, now)).toBeUndefined();
    expect(await rotateChannelSecret(database, project.id, channel.id, rotation(), now)).toBeUndefined();
    expect(await deleteChannel(database, project.id, channel.id, now)).toBeUndefined();
    expect(await updateRule(database, project.id, rule.id, { name: 'again' }, now)).toBeUndefined();
    expect(await deleteRule(database, project.id, rule.id)).toBeUndefined();
    expect(await findChannel(database, project.id, channel.id)).toBeUndefined();
    expect(await findRule(database, project.id, rule.id)).toBeUndefined();

    // A replay of no delivery queues nothing; an ack of no inbox event is undefined.
    expect(await queueReplay(database, project.id, createId('dlv'), createId('dlv'), now)).toBeUndefined();
    const deliveries = await database
      .selectFrom('deliveries')
      .select('id')
      .where('project_id', '=', project.id)
      .execute();
    expect(deliveries).toEqual([]);
    expect(await acknowledgeInboxEvent(database, project.id, createId('evt'))).toBeUndefined();
  });

  it('answers 404 not_found on every route that reads or changes a channel or rule deleted between requests', async () => {
    const project = await test.createProject();
    const { channel } = await created(project, '/v1/notifications/channels', {
      type: 'webhook',
      name: 'hooks',
      url: 'https://hooks.example.com/x',
    });
    const rule = await created(project, '/v1/notifications/rules', {
      name: 'clusters',
      source: CLUSTER_SOURCE,
      channelIds: [channel.id],
    });
    const queued = (await request(project, 'POST', `/v1/notifications/channels/${channel.id}/test`)).json();
    expect((await request(project, 'DELETE', `/v1/notifications/rules/${rule.id}`)).statusCode).toBe(204);
    expect((await request(project, 'DELETE', `/v1/notifications/channels/${channel.id}`)).statusCode).toBe(
      204,
    );

    const noChannel = { error: `No channel ${channel.id}`, code: 'not_found' };
    const noRule = { error: `No rule ${rule.id}`, code: 'not_found' };
    const missingDelivery = createId('dlv');
    const missingEvent = createId('evt');
    const cases: [Method, string, Record<string, unknown> | undefined, unknown][] = [
      ['GET', `/v1/notifications/channels/${channel.id}`, undefined, noChannel],
      ['PATCH', `/v1/notifications/channels/${channel.id}`, { name: 'renamed' }, noChannel],
      ['POST', `/v1/notifications/channels/${channel.id}/rotate-secret`, undefined, noChannel],
      ['POST', `/v1/notifications/channels/${channel.id}/test`, undefined, noChannel],
      ['DELETE', `/v1/notifications/channels/${channel.id}`, undefined, noChannel],
      ['GET', `/v1/notifications/rules/${rule.id}`, undefined, noRule],
      ['PATCH', `/v1/notifications/rules/${rule.id}`, { enabled: false }, noRule],
      // No such rule comes before its unknown channels.
      ['PATCH', `/v1/notifications/rules/${rule.id}`, { channelIds: [channel.id] }, noRule],
      ['DELETE', `/v1/notifications/rules/${rule.id}`, undefined, noRule],
      [
        'POST',
        `/v1/notifications/deliveries/${missingDelivery}/replay`,
        undefined,
        { error: `No delivery ${missingDelivery}`, code: 'not_found' },
      ],
      [
        'POST',
        `/v1/inbox/${missingEvent}/ack`,
        undefined,
        { error: `No notification ${missingEvent}`, code: 'not_found' },
      ],
    ];
    for (const [method, url, body, answer] of cases) {
      const response = await request(project, method, url, body);
      expect(response.statusCode, `${method} ${url}: ${response.body}`).toBe(404);
      expect(response.json(), `${method} ${url}`).toEqual(answer);
    }

    // The delivery queued before the deletion is still there to replay (to a channel that is gone).
    const replayed = await request(
      project,
      'POST',
      `/v1/notifications/deliveries/${queued.deliveryId}/replay`,
    );
    expect(replayed.statusCode, replayed.body).toBe(202);
    expect(replayed.json()).toMatchObject({
      eventId: queued.eventId,
      channelId: channel.id,
      replayOf: queued.deliveryId,
      status: 'pending',
      attemptLog: [],
    });
  });

  it("a PATCH of a rule with another project's channel changes nothing (400)", async () => {
    const project = await test.createProject();
    const other = await test.createProject();
    const { channel } = await created(other, '/v1/notifications/channels', {
      type: 'webhook',
      name: 'theirs',
      url: 'https://hooks.example.com/x',
    });
    const rule = await created(project, '/v1/notifications/rules', { name: 'mine', source: CLUSTER_SOURCE });
    const response = await request(project, 'PATCH', `/v1/notifications/rules/${rule.id}`, {
      name: 'renamed',
      channelIds: [channel.id],
    });
    expect(response.statusCode, response.body).toBe(400);
    expect(response.json()).toEqual({
      error: `Invalid body: no channel ${channel.id} in this project`,
      code: 'invalid',
    });
    expect((await request(project, 'GET', `/v1/notifications/rules/${rule.id}`)).json()).toEqual(rule);
  });

  // Only PostgreSQL runs two statements at once: one waits for the row lock of the other.
  // PGlite runs one statement at a time: a row cannot be locked while another statement waits.
  if (engine === 'postgres')
    it('answers 404 not_found when the channel or rule is deleted while the request runs', async () => {
      const project = await test.createProject();
      const channelBody = { type: 'webhook', name: 'hooks', url: 'https://hooks.example.com/x' };
      const raced = async (
        table: 'notification_channels' | 'notification_rules',
        id: string,
        method: Method,
        url: string,
        body?: Record<string, unknown>,
      ) => {
        const response = await deleteWhileLocked(test.database.location, table, id, () =>
          request(project, method, url, body),
        );
        expect(response.statusCode, `${method} ${url}: ${response.body}`).toBe(404);
        expect(response.json()).toEqual({
          error: `No ${table === 'notification_channels' ? 'channel' : 'rule'} ${id}`,
          code: 'not_found',
        });
      };

      const renamed = (await created(project, '/v1/notifications/channels', channelBody)).channel;
      await raced('notification_channels', renamed.id, 'PATCH', `/v1/notifications/channels/${renamed.id}`, {
        name: 'renamed',
      });
      const rotated = (await created(project, '/v1/notifications/channels', channelBody)).channel;
      await raced(
        'notification_channels',
        rotated.id,
        'POST',
        `/v1/notifications/channels/${rotated.id}/rotate-secret`,
      );
      const deleted = (await created(project, '/v1/notifications/channels', channelBody)).channel;
      await raced('notification_channels', deleted.id, 'DELETE', `/v1/notifications/channels/${deleted.id}`);

      const channel = (await created(project, '/v1/notifications/channels', channelBody)).channel;
      const ruleBody = { name: 'clusters', source: CLUSTER_SOURCE };
      const patched = await created(project, '/v1/notifications/rules', ruleBody);
      await raced('notification_rules', patched.id, 'PATCH', `/v1/notifications/rules/${patched.id}`, {
        enabled: false,
        channelIds: [channel.id],
      });
      const removed = await created(project, '/v1/notifications/rules', ruleBody);
      await raced('notification_rules', removed.id, 'DELETE', `/v1/notifications/rules/${removed.id}`);
    });
});
