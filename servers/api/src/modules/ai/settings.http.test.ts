import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectJson } from '../../../test/http.ts';
import { startSmtpServer, type TestSmtpServer } from '../../../test/smtp.ts';
import { createTestApp, type TestApp } from '../../../test/test-app.ts';
import { ENGINES } from '../../../test/test-database.ts';
import { accountsClient } from '../accounts/accounts.fixture.ts';

// An organization's AI settings through the API, on both engines: people signed in with the
// cookie read them (any member) and change them (admins and owners, audited); the model the
// server has is shown, never its key.

let smtp: TestSmtpServer;
beforeAll(async () => {
  smtp = await startSmtpServer();
});
afterAll(async () => {
  await smtp?.close();
});

describe.each(ENGINES)('AI settings on %s', (engine) => {
  let test: TestApp;
  const { send, signedIn } = accountsClient(
    () => test,
    () => smtp,
    engine === 'pglite' ? '10.61' : '10.62',
  );
  beforeAll(async () => {
    test = await createTestApp(
      engine,
      { logger: false },
      {
        SVC_SMTP_URL: smtp.url,
        SVC_AI_BASE_URL: 'http://127.0.0.1:9/v1',
        SVC_AI_MODEL: 'llama3',
        SVC_AI_API_KEY: 'sk-never-shown-0123',
      },
    );
  });
  afterAll(async () => {
    await test?.close();
  });

  it('shows them to members, lets admins change them, audits the change', async () => {
    const owner = await signedIn(`ai-owner-${engine}@example.com`);
    const as = (person: typeof owner) => ({ cookie: person.cookie, csrf: person.csrf });
    const orgId = expectJson(await send('POST', '/v1/orgs', { name: 'Acme' }, as(owner)), 201).id as string;

    const initial = expectJson(await send('GET', `/v1/orgs/${orgId}/ai/settings`, undefined, as(owner)), 200);
    expect(initial).toEqual({
      organizationId: orgId,
      enabled: false,
      monthlyTokenCap: null,
      features: ['summary', 'explain', 'search', 'chat', 'draft_pr'],
      usedThisMonth: 0,
      model: { configured: true, name: 'llama3' },
    });
    expect(JSON.stringify(initial)).not.toContain('sk-never-shown');

    const changed = expectJson(
      await send(
        'PATCH',
        `/v1/orgs/${orgId}/ai/settings`,
        { enabled: true, monthlyTokenCap: 50_000, features: ['chat', 'summary'] },
        as(owner),
      ),
      200,
    );
    expect(changed).toMatchObject({ enabled: true, monthlyTokenCap: 50_000, features: ['summary', 'chat'] });
    const partial = expectJson(
      await send('PATCH', `/v1/orgs/${orgId}/ai/settings`, { monthlyTokenCap: null }, as(owner)),
      200,
    );
    expect(partial).toMatchObject({ enabled: true, monthlyTokenCap: null, features: ['summary', 'chat'] });

    for (const body of [
      {},
      { enabled: 'yes' },
      { monthlyTokenCap: -1 },
      { features: ['telepathy'] },
      { other: 1 },
    ]) {
      const refused = await send('PATCH', `/v1/orgs/${orgId}/ai/settings`, body, as(owner));
      expect(refused.statusCode, JSON.stringify(body)).toBe(400);
      expect(refused.json().code).toBe('invalid');
    }

    const audit = expectJson(await send('GET', `/v1/orgs/${orgId}/audit`, undefined, as(owner)), 200);
    const entries = audit.items.filter((entry: { action: string }) => entry.action === 'ai.settings_changed');
    expect(entries).toHaveLength(2);
    expect(entries[1].details).toMatchObject({
      from: { enabled: false, monthlyTokenCap: null },
      to: { enabled: true, monthlyTokenCap: 50_000, features: ['summary', 'chat'] },
    });

    const stranger = await signedIn(`ai-stranger-${engine}@example.com`);
    expect((await send('GET', `/v1/orgs/${orgId}/ai/settings`, undefined, as(stranger))).statusCode).toBe(
      404,
    );
    expect(
      (await send('PATCH', `/v1/orgs/${orgId}/ai/settings`, { enabled: false }, as(stranger))).statusCode,
    ).toBe(404);
    expect(
      (await test.app.inject({ url: `/v1/orgs/${orgId}/ai/settings`, headers: test.first.headers }))
        .statusCode,
    ).toBe(403);
  });
});
