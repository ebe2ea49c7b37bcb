import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startNodeReceiver } from '../../../examples/webhook-receiver/src/node-receiver.ts';
import type { WebhookReceiver } from '../../../examples/webhook-receiver/src/receiver.ts';
import { type Dashboard, expectAccessible, screenshot, startDashboard } from './harness.ts';
import { apiGet, ingestErrorSession } from './issue-fixtures.ts';

// The notifications pages against the real server and a real webhook receiver (node:http on
// 127.0.0.1, verifying every request's signature with @svc/webhook-verify and answering 200 only
// then): a channel made in the app, its secret shown once, a test event and a replay delivered by
// the app's delivery worker; a rule made in the app routes a new issue (from the real ingest) to
// the channel and the inbox, where it is acknowledged.

let dashboard: Dashboard;
let receiver: WebhookReceiver;
let scope: string;

beforeAll(async () => {
  // The server delivers webhooks itself, in the background, as in production.
  dashboard = await startDashboard({ environment: { SVC_DELIVERY_WORKER: 'true' } });
  // The receiver learns the channel's secret once the app shows it; until then it refuses all.
  receiver = await startNodeReceiver({ secrets: 'whsec_not_yet_known' });
  const { project } = dashboard.test.first;
  scope = `org=${project.organization_id}&project=${project.id}`;
}, 120_000);

afterAll(async () => {
  await receiver?.close();
  await dashboard?.close();
});

interface DeliveryView {
  id: string;
  eventId: string;
  eventType: string;
  status: string;
  replayOf?: string;
  attemptLog: Array<{ statusCode?: number; outcome: string }>;
}

/** The page's rows of deliveries, as the user reads them. */
async function deliveryRows(page: Page): Promise<string[]> {
  return page.locator('tr[data-delivery-id]').allTextContents();
}

describe('notifications', () => {
  let channelId: string;
  let secret: string;

  it('a webhook channel: the secret is shown once, a test event reaches the receiver, and a replay too', {
    timeout: 90_000,
  }, async () => {
    const { page, errors } = await dashboard.open(`/notifications/channels?${scope}`, {
      as: dashboard.people.member,
    });
    page.setDefaultTimeout(15_000);
    await page.getByRole('heading', { name: 'Notifications: Channels', level: 1 }).waitFor();
    await page.getByText('No channel yet.').waitFor();
    await expectAccessible(page);

    await page.getByLabel('Name', { exact: true }).fill('Test receiver');
    await page.getByLabel('Webhook URL').fill(receiver.url);
    await page.getByRole('button', { name: 'Create channel' }).click();
    await page.getByRole('heading', { name: 'Signing secret of “Test receiver”' }).waitFor();
    await page.getByText('Copy it now: you won’t see it again.').waitFor();
    secret = (await page.locator('.secret code').textContent()) ?? '';
    expect(secret).toMatch(/^whsec_/);
    const row = page.locator('tr[data-channel-id]', { hasText: 'Test receiver' });
    await row.waitFor();
    channelId = (await row.getAttribute('data-channel-id')) ?? '';
    expect(channelId).toMatch(/^ch_/);
    expect(await row.textContent()).toContain(receiver.url);
    await expectAccessible(page);
    receiver.setSecrets(secret);

    // Gone once dismissed, and after a reload: the server never shows it again.
    await page.getByRole('button', { name: 'I have saved it' }).click();
    expect(await page.getByText(secret).count()).toBe(0);
    await page.reload();
    await row.waitFor();
    expect(await page.content()).not.toContain('whsec_');

    // Send test: queued, delivered by the app's worker, verified by the receiver.
    await row.getByRole('button', { name: 'Send test' }).click();
    await row.getByText('Test event queued.').waitFor();
    const received = await receiver.waitFor((delivery) => delivery.event.type === 'notification.test');
    expect(receiver.rejected).toEqual([]);
    expect(received.attempt).toBe(1);

    // The deliveries page lists it, with its attempt and the receiver's 200.
    await row.getByRole('link', { name: 'See its delivery' }).click();
    await page.waitForURL(`/notifications/deliveries?channel=${channelId}&${scope}`);
    await page.getByRole('heading', { name: 'Notifications: Deliveries', level: 1 }).waitFor();
    const first = page.locator(`tr[data-delivery-id="${received.deliveryId}"]`);
    await first.waitFor();
    expect(await first.textContent()).toMatch(
      /notification\.test.*Test receiver.*delivered.*delivered HTTP 200/s,
    );
    expect(await page.getByRole('combobox', { name: 'Channel' }).inputValue()).toBe(channelId);
    await expectAccessible(page);

    // Replay: a new delivery of the same event, pending until the worker sends it.
    await first.getByRole('button', { name: 'Replay' }).click();
    await expect.poll(async () => (await deliveryRows(page)).length).toBe(2);
    await expect
      .poll(async () => (await deliveryRows(page)).filter((text) => text.includes('HTTP 200')).length, {
        timeout: 10_000,
      })
      .toBe(2);
    const replayed = receiver.deliveries.filter((delivery) => delivery.eventId === received.eventId);
    expect(replayed.map((delivery) => delivery.deliveryId)).toHaveLength(2);
    const replay = replayed[1];
    expect((await deliveryRows(page))[0]).toContain(`replay of ${received.deliveryId}`);
    const listed = await apiGet<{ items: DeliveryView[] }>(
      dashboard.test,
      `/v1/notifications/deliveries?channel=${channelId}`,
    );
    expect(
      listed.items.map((item) => [item.id, item.status, item.replayOf, item.attemptLog[0]?.statusCode]),
    ).toEqual([
      [replay?.deliveryId, 'delivered', received.deliveryId, 200],
      [received.deliveryId, 'delivered', undefined, 200],
    ]);
    await screenshot(page, 'deliveries');
    expect(errors).toEqual([]);
    await page.context().close();
  });

  it('rotating the secret shows the new one once; the receiver verifies with it', async () => {
    const { page, errors } = await dashboard.open(`/notifications/channels?${scope}`, {
      as: dashboard.people.admin,
    });
    page.setDefaultTimeout(15_000);
    const row = page.locator(`tr[data-channel-id="${channelId}"]`);
    await row.getByRole('button', { name: 'Rotate secret' }).click();
    await row.getByRole('button', { name: 'Rotate now' }).click();
    await page.getByRole('heading', { name: 'New signing secret of “Test receiver”' }).waitFor();
    const rotated = (await page.locator('.secret code').textContent()) ?? '';
    expect(rotated).toMatch(/^whsec_/);
    expect(rotated).not.toBe(secret);
    await row.getByText('Previous secret signs too until').waitFor();
    await expectAccessible(page);

    // Only the new secret at the receiver: a test event still verifies.
    receiver.setSecrets(rotated);
    await row.getByRole('button', { name: 'Send test' }).click();
    await row.getByText('Test event queued.').waitFor();
    await expect
      .poll(
        () => receiver.deliveries.filter((delivery) => delivery.event.type === 'notification.test').length,
      )
      .toBe(3);
    expect(receiver.rejected).toEqual([]);
    expect(errors).toEqual([]);
    await page.context().close();
  });

  it('a failed attempt shows its status, the receiver’s answer and the next attempt', async () => {
    receiver.setResponder(() => ({ status: 500, body: 'receiver is down for maintenance' }));
    const { page, errors } = await dashboard.open(`/notifications/channels?${scope}`, {
      as: dashboard.people.member,
    });
    page.setDefaultTimeout(15_000);
    const row = page.locator(`tr[data-channel-id="${channelId}"]`);
    const before = receiver.deliveries.length;
    await row.getByRole('button', { name: 'Send test' }).click();
    await row.getByText('Test event queued.').waitFor();
    const failed = await receiver.waitFor((delivery) => receiver.deliveries.indexOf(delivery) >= before);
    receiver.setResponder(undefined);

    await page.getByRole('link', { name: 'Deliveries' }).click();
    await page.getByRole('combobox', { name: 'Status' }).selectOption('pending');
    const delivery = page.locator(`tr[data-delivery-id="${failed.deliveryId}"]`);
    await delivery.waitFor();
    await expect.poll(() => delivery.textContent()).toMatch(/pending.*next attempt.*failed HTTP 500/s);
    await delivery.getByText('Response body').click();
    await delivery.getByText('receiver is down for maintenance').waitFor();
    await expectAccessible(page);
    expect(errors).toEqual([]);
    await page.context().close();
  });

  it('a rule made in the app sends a new issue to the channel and the inbox, where it is acknowledged', {
    timeout: 90_000,
  }, async () => {
    const { page, errors } = await dashboard.open(`/notifications/rules?${scope}`, {
      as: dashboard.people.member,
    });
    page.setDefaultTimeout(15_000);
    await page.getByRole('heading', { name: 'Notifications: Rules', level: 1 }).waitFor();
    await page.getByText('No rule yet.').waitFor();
    await page.getByRole('button', { name: 'New rule' }).click();
    await page.getByLabel('Rule name').fill('New browser errors');
    const events = page.getByRole('group', { name: 'Issue events' });
    await events.getByLabel(/A resolved issue comes back/).uncheck();
    expect(await events.getByLabel(/A new issue appears/).isChecked()).toBe(true);
    await page.getByRole('group', { name: 'Issue kinds' }).getByLabel('Browser error').check();
    expect(
      await page.getByRole('group', { name: 'Send to channels' }).getByLabel('Test receiver').isChecked(),
    ).toBe(true);
    // A threshold event needs a threshold: the form says so before sending anything.
    await events.getByLabel(/A browser error reaches/).check();
    await page.getByLabel('Threshold (occurrences in 24 hours)').fill('5');
    await expectAccessible(page);
    await events.getByLabel(/A browser error reaches/).uncheck();
    await page.getByRole('button', { name: 'Create rule' }).click();
    const row = page.locator('tr[data-rule-id]', { hasText: 'New browser errors' });
    await row.waitFor();
    expect(await row.textContent()).toContain('Issues: cluster.created — Browser error');
    expect(await row.textContent()).toContain('Test receiver');
    expect(await row.textContent()).toContain('60 min');
    await expectAccessible(page);

    // Edit: no throttle.
    await row.getByRole('button', { name: 'Edit New browser errors' }).click();
    await page.getByLabel(/^Throttle/).fill('0');
    await page.getByRole('button', { name: 'Save rule' }).click();
    await expect.poll(() => row.locator('td').nth(2).textContent()).toBe('none');

    // A session with errors through the real ingest: two new error issues, each notified once.
    const sessionId = await ingestErrorSession(dashboard.test);
    const createdEvents = () =>
      receiver.deliveries.filter((delivery) => delivery.event.type === 'cluster.created');
    await expect.poll(() => createdEvents().length, { timeout: 10_000 }).toBe(2);
    const created = createdEvents();
    expect(receiver.rejected).toEqual([]);

    await page.getByRole('link', { name: 'Inbox' }).click();
    await page.waitForURL(`/notifications/inbox?${scope}`);
    await page.getByRole('heading', { name: 'Notifications: Inbox', level: 1 }).waitFor();
    const items = page.locator('li.inbox-item');
    await expect.poll(() => items.count()).toBe(2);
    const item = items.filter({ hasText: 'TypeError' });
    expect(await item.textContent()).toContain('cluster.created');
    expect(await item.textContent()).toContain(sessionId);
    const eventId = (await item.getAttribute('data-event-id')) ?? '';
    expect(created.map((delivery) => delivery.eventId)).toContain(eventId);
    const issueLink = item.getByRole('link', { name: 'Open the issue' });
    expect(await issueLink.getAttribute('href')).toMatch(new RegExp(`^/issues/cl_[0-9A-Z]+\\?${scope}$`));
    await expectAccessible(page);
    await screenshot(page, 'inbox');

    await item.getByRole('button', { name: /^Acknowledge/ }).click();
    await expect.poll(() => items.count()).toBe(1);
    const open = await apiGet<{ items: Array<{ id: string }> }>(dashboard.test, '/v1/inbox?acked=false');
    expect(open.items.map((entry) => entry.id)).not.toContain(eventId);
    expect(open.items).toHaveLength(1);
    // The choice is in the URL, which the router updates in a transition: click, then wait for it.
    await page.getByLabel('All', { exact: true }).click();
    await page.waitForURL(/show=all/);
    await expect.poll(() => items.count()).toBe(2);
    expect(await items.filter({ hasText: 'TypeError' }).textContent()).toContain('acknowledged');
    expect(await items.filter({ hasText: 'TypeError' }).getByRole('button').count()).toBe(0);
    expect(errors).toEqual([]);
    await page.context().close();
  });

  it('custom-event and security rules: their sources as the API stores them; a new API token reaches the channel and the inbox', {
    timeout: 90_000,
  }, async () => {
    const { page, context, errors } = await dashboard.open(`/notifications/rules?${scope}`, {
      as: dashboard.people.owner,
    });
    page.setDefaultTimeout(15_000);
    await page.locator('tr[data-rule-id]').first().waitFor();

    await page.getByRole('button', { name: 'New rule' }).click();
    await page.getByLabel('Rule name').fill('Failed checkouts');
    await page.getByLabel('Listens to').selectOption('custom');
    await page.getByLabel('Event name').fill('checkout_failed');
    await page.getByLabel(/^Required properties/).fill('plan=pro\namount=42\ncode="42"\nretried=false');
    await page.getByLabel('Minimum severity').selectOption('high');
    await page.getByLabel(/^Environment/).fill('production');
    await expectAccessible(page);
    await page.getByRole('button', { name: 'Create rule' }).click();
    const custom = page.locator('tr[data-rule-id]', { hasText: 'Failed checkouts' });
    await custom.waitFor();
    expect(await custom.textContent()).toContain('Custom event “checkout_failed”');

    await page.getByRole('button', { name: 'New rule' }).click();
    await page.getByLabel('Rule name').fill('Security');
    await page.getByLabel('Listens to').selectOption('security');
    await page
      .getByRole('group', { name: 'Security events' })
      .getByLabel(/An API token is created/)
      .check();
    await page.getByLabel(/^Throttle/).fill('0');
    await page.getByRole('button', { name: 'Create rule' }).click();
    const security = page.locator('tr[data-rule-id]', { hasText: 'Security' });
    await security.waitFor();
    expect(await security.textContent()).toContain('Security: security.token_created');

    const rules = await apiGet<{ items: Array<{ name: string; source: unknown; channelIds: string[] }> }>(
      dashboard.test,
      '/v1/notifications/rules',
    );
    expect(rules.items.find((rule) => rule.name === 'Failed checkouts')).toMatchObject({
      channelIds: [channelId],
      source: {
        type: 'custom',
        name: 'checkout_failed',
        properties: { plan: 'pro', amount: 42, code: '42', retried: false },
        minSeverity: 'high',
        environment: 'production',
      },
    });
    expect(rules.items.find((rule) => rule.name === 'Security')).toMatchObject({
      channelIds: [channelId],
      source: { type: 'security', events: ['security.token_created'] },
    });

    // The owner makes an API token (the organization's route): a security event, delivered to
    // the channel through the rule and listed in the inbox.
    const me = (await (await context.request.get('/v1/me')).json()) as { csrfToken: string };
    const token = await context.request.post(
      `/v1/orgs/${dashboard.test.first.project.organization_id}/tokens`,
      {
        data: { name: 'ci deploys', projectId: dashboard.test.first.project.id, scopes: ['sessions:read'] },
        headers: { 'x-service-csrf': me.csrfToken },
      },
    );
    expect(token.status()).toBe(201);
    const delivered = await receiver.waitFor((delivery) => delivery.event.type === 'security.token_created');
    expect(receiver.rejected).toEqual([]);
    await page.getByRole('link', { name: 'Inbox' }).click();
    const item = page.locator(`li[data-event-id="${delivered.eventId}"]`);
    await item.waitFor();
    expect(await item.textContent()).toContain('API token "ci deploys" created');
    expect(errors).toEqual([]);
    await page.context().close();
  });

  it('a viewer sees channels, rules, deliveries and the inbox without any control', async () => {
    const { page, errors } = await dashboard.open(`/notifications?${scope}`, { as: dashboard.people.viewer });
    page.setDefaultTimeout(15_000);
    await page.waitForURL(`/notifications/inbox?${scope}`);
    await page.locator('li.inbox-item').first().waitFor();
    expect(await page.getByRole('button', { name: /^Acknowledge/ }).count()).toBe(0);
    await expectAccessible(page);
    await page.getByRole('link', { name: 'Channels' }).click();
    await page.locator(`tr[data-channel-id="${channelId}"]`).waitFor();
    for (const name of ['Send test', 'Rotate secret', 'Delete', 'Create channel'])
      expect(await page.getByRole('button', { name }).count(), name).toBe(0);
    await page.getByRole('link', { name: 'Rules' }).click();
    await page.locator('tr[data-rule-id]').first().waitFor();
    expect(await page.getByRole('button', { name: 'New rule' }).count()).toBe(0);
    await expectAccessible(page);
    await page.getByRole('link', { name: 'Deliveries' }).click();
    await page.locator('tr[data-delivery-id]').first().waitFor();
    expect(await page.getByRole('button', { name: /^Replay/ }).count()).toBe(0);
    await expectAccessible(page);
    expect(errors).toEqual([]);
    await page.context().close();
  });

  it('disabling and deleting: the rule, then the channel', async () => {
    const { page, errors } = await dashboard.open(`/notifications/channels?${scope}`, {
      as: dashboard.people.member,
    });
    page.setDefaultTimeout(15_000);
    const row = page.locator(`tr[data-channel-id="${channelId}"]`);
    await row.getByRole('button', { name: 'Disable' }).click();
    await row.getByRole('button', { name: 'Enable' }).waitFor();
    expect(await row.textContent()).toContain('Disabled');
    expect(
      (await apiGet<{ enabled: boolean }>(dashboard.test, `/v1/notifications/channels/${channelId}`)).enabled,
    ).toBe(false);

    await page.getByRole('link', { name: 'Rules' }).click();
    const rule = page.locator('tr[data-rule-id]', { hasText: 'New browser errors' });
    await rule.getByRole('button', { name: 'Delete New browser errors' }).click();
    await rule.getByRole('button', { name: 'Delete rule' }).click();
    await rule.waitFor({ state: 'detached' });
    expect(
      (await apiGet<{ items: Array<{ name: string }> }>(dashboard.test, '/v1/notifications/rules')).items.map(
        (item) => item.name,
      ),
    ).toEqual(expect.not.arrayContaining(['New browser errors']));

    await page.getByRole('link', { name: 'Channels' }).click();
    await row.getByRole('button', { name: 'Delete' }).click();
    await row.getByRole('button', { name: 'Delete channel' }).click();
    await page.getByText('No channel yet.').waitFor();
    expect((await apiGet<{ items: unknown[] }>(dashboard.test, '/v1/notifications/channels')).items).toEqual(
      [],
    );
    expect(errors).toEqual([]);
    await page.context().close();
  });
});
