import { type AddressInfo, createServer } from 'node:net';
import AxeBuilder from '@axe-core/playwright';
import { CHROMIUM, CHROMIUM_ARGS } from '@svc-dev/chromium';
import { type Browser, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashPassword } from '../../api/src/modules/accounts/passwords.ts';
import { insertUser } from '../../api/src/modules/accounts/repository.ts';
import { newSessionId, postChunk, rewriteChunk, validChunkFixture } from '../../api/test/ingest-helpers.ts';
import { createTestApp, type TestApp } from '../../api/test/test-app.ts';
import { buildIfStale } from '../scripts/build-if-stale.ts';

// The dashboard in headless Chromium against the real server (its built files served by the API,
// the embedded store): signing in, the session list, the security headers, and axe-core on each
// page.

const PASSWORD = 'correct horse battery staple';

let test: TestApp;
let browser: Browser;
let base: string;
let sessionId: string;

beforeAll(async () => {
  await buildIfStale();
  // The server's public URL is where the browser finds it: sign-in requests from another origin
  // are refused (servers/api/README.md, Accounts).
  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  test = await createTestApp('pglite', { logger: false }, { SVC_PUBLIC_URL: base });
  await test.app.listen({ host: '127.0.0.1', port });
  const user = await insertUser(test.database.database, {
    email: 'ada@example.com',
    name: 'Ada',
    passwordHash: await hashPassword(PASSWORD),
    emailVerified: true,
  });
  if (user === undefined) throw new Error('no user');
  await test.database.database
    .insertInto('organization_members')
    .values({ organization_id: test.first.project.organization_id, user_id: user.id, role: 'viewer' })
    .execute();
  sessionId = newSessionId();
  const chunk = rewriteChunk(await validChunkFixture('recording-seq-0'), { sessionId });
  expect((await postChunk(test.app, test.first.projectKey, chunk)).statusCode).toBe(200);
  browser = await chromium.launch({ executablePath: CHROMIUM, args: [...CHROMIUM_ARGS] });
}, 120_000);

/** A TCP port nothing listens on now. */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

afterAll(async () => {
  await browser?.close();
  await test?.close();
});

/** A page that fails the test on any console error (a CSP violation is one). */
async function open(path: string): Promise<{ page: Page; errors: string[] }> {
  const context = await browser.newContext();
  const page = await context.newPage();
  const errors: string[] = [];
  page.on('console', (message) => {
    if (message.type() === 'error') errors.push(message.text());
  });
  page.on('pageerror', (error) => errors.push(error.message));
  // Failed answers by URL (the console's lines do not say which): a signed-out GET /v1/me is the
  // only one expected (a 401 that sends the app to the sign-in page), and a wrong password's 401.
  page.on('response', (response) => {
    const path = new URL(response.url()).pathname;
    if (response.status() >= 400 && !(response.status() === 401 && ['/v1/me', '/auth/login'].includes(path)))
      errors.push(`${response.status()} ${path}`);
  });
  await page.goto(`${base}${path}`);
  return { page, errors };
}

async function expectAccessible(page: Page): Promise<void> {
  const results = await new AxeBuilder({ page }).analyze();
  const serious = results.violations.filter(
    (violation) => violation.impact === 'serious' || violation.impact === 'critical',
  );
  expect(serious.map((violation) => `${violation.id}: ${violation.help}`)).toEqual([]);
}

describe('the dashboard', () => {
  it('is served with a strict Content-Security-Policy, and the API paths stay the API', async () => {
    const page = await fetch(`${base}/sessions`, { headers: { accept: 'text/html' } });
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    const policy = page.headers.get('content-security-policy') ?? '';
    expect(policy).toContain("script-src 'self'");
    expect(policy).not.toContain('unsafe-inline');
    expect(policy).not.toContain('unsafe-eval');
    expect(page.headers.get('x-content-type-options')).toBe('nosniff');
    const html = await page.text();
    expect(html).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
    // An unknown API path is the API's 404, even for a browser.
    const api = await fetch(`${base}/v1/nothing`, { headers: { accept: 'text/html' } });
    expect(api.status).toBe(404);
    expect(await api.json()).toMatchObject({ code: 'not_found' });
  });

  it('signs in with a password and lists the project’s sessions; the pages pass axe-core', async () => {
    const { page, errors } = await open('/sessions');
    await page.waitForURL(/\/login\?next=%2Fsessions$/);
    await expectAccessible(page);

    await page.getByLabel('E-mail address').fill('ada@example.com');
    await page.getByLabel('Password').fill('wrong password');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expect
      .poll(() => page.getByRole('alert').textContent())
      .toBe('The e-mail address or the password is wrong');

    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(/\/sessions$/);
    await page.getByRole('heading', { name: 'Sessions' }).waitFor();
    await page.locator(`tr[data-session-id="${sessionId}"]`).waitFor();
    expect(await page.getByRole('combobox', { name: 'Project', exact: true }).inputValue()).toBe(
      test.first.project.id,
    );
    await expectAccessible(page);

    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.waitForURL(/\/login$/);
    expect(
      errors.filter(
        (error) => !error.startsWith('Failed to load resource: the server responded with a status of 401'),
      ),
    ).toEqual([]);
    await page.context().close();
  });
});
