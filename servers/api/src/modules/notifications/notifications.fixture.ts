import { type ReceivedDelivery, startNodeReceiver, type WebhookReceiver } from '@example/webhook-receiver';
import { webhookEventSchema } from '@svc/protocol';
import { afterAll, afterEach, beforeAll, beforeEach, expect } from 'vitest';
import { callTimeline, chunkBytes, ingest, sessionMeta } from '../../../test/call-timelines.ts';
import { apiClient, type Json } from '../../../test/http.ts';
import { newSessionId } from '../../../test/ingest-helpers.ts';
import { createTestApp, type TestApp, type TestProject } from '../../../test/test-app.ts';
import type { Engine } from '../../../test/test-database.ts';
import { createDestinationPolicy, parseAllowedHosts } from '../../platform/http/destination-policy.ts';
import { createDeliveryWorker } from './delivery-worker.ts';

// What the notifications tests (notifications.*.test.ts) share. They are issues and
// notifications end to end: chunks through POST /v1/ingest, the processing job that clusters
// findings and errors, rules, the outbox, and the delivery worker posting signed webhooks to a
// real receiver (examples/webhook-receiver, verifying with @svc/webhook-verify).

export const T0 = Date.UTC(2026, 10, 20, 10, 0, 0);

/** What the helpers read from, and tell, the test file that holds the app and the receiver. */
export interface NotificationsTestContext {
  /** The app, created in the test file's `beforeAll`. */
  test(): TestApp;
  /** The clock the delivery worker schedules with. */
  clock(): number;
  /** Takes the receiver `setUp` started (the test file closes it after each test). */
  started(receiver: WebhookReceiver): void;
}

/** The helpers of the notifications tests, on the test file's app, clock and receiver. */
function notificationsKit(context: NotificationsTestContext) {
  const { request, ok } = apiClient(context.test);

  const worker = (options: { timeoutMs?: number; allowed?: string } = {}) => {
    const test = context.test();
    return createDeliveryWorker(
      {
        database: test.database.database,
        masterKey: test.processingDependencies.masterKey,
        policy: createDestinationPolicy(parseAllowedHosts(options.allowed ?? '127.0.0.1').allowed),
        log: test.app.log,
      },
      // The test's clock, never behind the wall clock (events are queued at wall-clock time).
      {
        now: () => Math.max(context.clock(), Date.now()),
        random: () => 0.5,
        ...(options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs }),
      },
    );
  };

  /** A fresh project with a webhook channel at a fresh receiver and one rule. */
  async function setUp(
    rule: Record<string, unknown>,
    project?: TestProject,
    start: typeof startNodeReceiver = startNodeReceiver,
  ) {
    const owner = project ?? (await context.test().createProject());
    const created = await ok(
      'POST',
      '/v1/notifications/channels',
      { type: 'webhook', name: 'hooks', url: 'http://127.0.0.1:9/' },
      owner,
    );
    const receiver = await start({ secrets: created.secret });
    context.started(receiver);
    await ok('PATCH', `/v1/notifications/channels/${created.channel.id}`, { url: receiver.url }, owner);
    const made = await ok(
      'POST',
      '/v1/notifications/rules',
      { name: 'rule', channelIds: [created.channel.id], throttleMinutes: 0, ...rule },
      owner,
    );
    return { project: owner, channel: created.channel, secret: created.secret as string, rule: made };
  }

  /** Ingests one chunk (its JSON) for the project, and expects it stored. */
  const send = (project: TestProject, chunk: Parameters<typeof chunkBytes>[0]) =>
    ingest(context.test().app, project.projectKey, chunkBytes(chunk));

  /** Ingests one session with a call that never connects (webrtc_connect_failure). */
  async function failingCallSession(
    project: TestProject,
    options: { release?: string; start?: number } = {},
  ) {
    const sessionId = newSessionId();
    const start = options.start ?? T0;
    const call = callTimeline({ start: start + 1_000, setupMs: null, fail: true, candidateError: 701 });
    await send(project, {
      sessionId,
      seq: 0,
      sentAt: call.end + 100,
      meta: sessionMeta(start, options.release === undefined ? {} : { release: options.release }),
      events: call.items,
    });
    await context.test().processingWorker.runUntilIdle();
    return sessionId;
  }

  return { request, ok, worker, setUp, send, failingCallSession };
}

/** The app, the receiver `setUp` started last, and the clock the delivery worker schedules with. */
interface NotificationsSuite {
  /** Set before the suite's tests run. */
  test: TestApp;
  /** Set by `setUp` (the tests that read it call `setUp` first). */
  receiver: WebhookReceiver;
  clock: number;
}

/**
 * One suite's app on `engine` (created before its tests, closed after them), its receiver (closed
 * after each test) and its clock (the wall clock at each test's start), with the helpers on them.
 * Call it inside the suite's `describe`.
 */
export function notificationsSuite(engine: Engine) {
  // Filled in by the hooks and `setUp`, before any test reads them (as the `let`s of a suite are).
  const suite = { clock: 0 } as NotificationsSuite;
  beforeAll(async () => {
    suite.test = await createTestApp(engine);
  });
  afterAll(async () => {
    await suite.test?.close();
  });
  beforeEach(() => {
    suite.clock = Date.now();
  });
  afterEach(async () => {
    await suite.receiver?.close();
  });
  const kit = notificationsKit({
    test: () => suite.test,
    clock: () => suite.clock,
    started: (started) => {
      suite.receiver = started;
    },
  });
  return { suite, ...kit };
}

/** The delivery's event, once its raw body is a valid webhook event of the protocol. */
export function verified(delivery: ReceivedDelivery): Json {
  const parsed = webhookEventSchema.safeParse(JSON.parse(delivery.rawBody));
  expect(parsed.success, JSON.stringify(parsed.error?.issues)).toBe(true);
  return delivery.event as Json;
}
