import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { startNodeReceiver, type WebhookReceiver } from '@example/webhook-receiver';
import { afterEach, describe, expect, it } from 'vitest';
import { createProjectWithToken } from '../src/modules/projects/bootstrap.ts';
import { loadMasterKey } from '../src/platform/crypto/index.ts';
import { eventually } from './eventually.ts';
import {
  apiRequest as call,
  createScratchDirectories,
  kill,
  type SpawnedServer,
  spawnServer,
} from './process-helpers.ts';
import { openTestDatabase, type TestDatabase, withMigratedStore } from './test-database.ts';

// Webhook delivery across real server processes: a server SIGKILLed in the middle of an attempt,
// and two servers delivering from one PostgreSQL outbox.

const scratch = createScratchDirectories('svc-deliveries-');
const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  await scratch.removeAll();
});

async function receiverFor(options: Parameters<typeof startNodeReceiver>[0]): Promise<WebhookReceiver> {
  const receiver = await startNodeReceiver(options);
  cleanups.push(() => receiver.close());
  return receiver;
}

async function server(environment: Record<string, string>): Promise<SpawnedServer> {
  const started = await spawnServer({ SVC_WEBHOOK_ALLOWED_HOSTS: '127.0.0.1', ...environment });
  cleanups.push(() => kill(started));
  return started;
}

describe('webhook delivery across processes', () => {
  it('a server killed during an attempt delivers after its restart: at least once, same evt_ id', async () => {
    // An empty embedded store at the latest schema (a copy of the run's template).
    const directory = await withMigratedStore(await scratch.make());
    let first = await server({ SVC_DATA_DIR: directory });
    const credentials = JSON.parse(await readFile(join(directory, 'first-project.json'), 'utf8')) as {
      apiToken: string;
    };
    const token = credentials.apiToken;
    let hung = false;
    const receiver = await receiverFor({
      secrets: 'whsec_placeholder',
      respond: () => {
        if (hung) return { status: 200 };
        hung = true;
        return 'hang';
      },
    });
    const created = await call(`${first.url}/v1/notifications/channels`, token, 'POST', {
      type: 'webhook',
      name: 'receiver',
      url: receiver.url,
    });
    receiver.setSecrets(created.secret);
    const queued = await call(
      `${first.url}/v1/notifications/channels/${created.channel.id}/test`,
      token,
      'POST',
    );

    // The first attempt reaches the receiver, which holds it; the server dies meanwhile.
    await receiver.waitFor((delivery) => delivery.attempt === 1);
    await kill(first);

    first = await server({ SVC_DATA_DIR: directory });
    const again = await receiver.waitFor((delivery) => delivery.attempt === 2, 20_000);
    expect(again.eventId).toBe(queued.eventId);
    expect(again.deliveryId).toBe(queued.deliveryId);
    expect(again.duplicate).toBe(true);
    const state = await eventually(async () => {
      const delivery = await call(
        `${first.url}/v1/notifications/deliveries/${queued.deliveryId}`,
        token,
        'GET',
      );
      return delivery.status === 'delivered' ? delivery : undefined;
    });
    expect(state).toMatchObject({ attempts: 2, lastStatus: 200 });
    // The attempt cut off by the kill left no record; the one after the restart did.
    expect(state.attemptLog.map((attempt: { attempt: number }) => attempt.attempt)).toEqual([2]);
  }, 60_000);

  it('two servers on one PostgreSQL never make one attempt twice', async () => {
    const database: TestDatabase = await openTestDatabase('postgres');
    cleanups.push(() => database.dispose());
    const masterKey = randomBytes(32).toString('base64');
    const credentials = await createProjectWithToken(
      database.database,
      await loadMasterKey({ masterKey, dataDirectory: '/nonexistent' }),
      { name: 'Two workers' },
    );
    const environment = async () => ({
      SVC_DATA_DIR: await scratch.make(),
      SVC_MASTER_KEY: masterKey,
      DATABASE_URL: database.location,
      DATABASE_POOL_SIZE: '4',
    });
    const receiver = await receiverFor({
      secrets: 'whsec_placeholder',
      // A little latency so both servers have attempts in flight at once.
      respond: async () => {
        await new Promise((resolve) => setTimeout(resolve, 5 + Math.random() * 20));
        return { status: 200 };
      },
    });
    const [one, two] = await Promise.all([server(await environment()), server(await environment())]);
    const token = credentials.apiToken;
    const created = await call(`${one.url}/v1/notifications/channels`, token, 'POST', {
      type: 'webhook',
      name: 'receiver',
      url: receiver.url,
    });
    receiver.setSecrets(created.secret);

    const count = 120;
    const queued = await Promise.all(
      Array.from({ length: count }, (_, index) =>
        call(
          `${(index % 2 === 0 ? one : two).url}/v1/notifications/channels/${created.channel.id}/test`,
          token,
          'POST',
        ),
      ),
    );
    await eventually(() => receiver.deliveries.length >= count, { timeoutMs: 30_000 });
    // Give a duplicate, if any, the time to arrive.
    await new Promise((resolve) => setTimeout(resolve, 1_500));

    const attempts = receiver.deliveries.map((delivery) => `${delivery.deliveryId}/${delivery.attempt}`);
    expect(attempts).toHaveLength(count);
    expect(new Set(attempts).size).toBe(count);
    expect(new Set(receiver.deliveries.map((delivery) => delivery.deliveryId))).toEqual(
      new Set(queued.map((entry: { deliveryId: string }) => entry.deliveryId)),
    );
    expect(receiver.rejected).toHaveLength(0);
    const recorded = await database.database
      .selectFrom('delivery_attempts')
      .select(({ fn }) => fn.countAll<number>().as('count'))
      .where('project_id', '=', credentials.projectId)
      .executeTakeFirstOrThrow();
    expect(Number(recorded.count)).toBe(count);
  }, 90_000);
});
