import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newSessionId, postChunk, rewriteChunk, validChunkFixture } from '../../api/test/ingest-helpers.ts';
import { type Dashboard, expectAccessible, PASSWORD, startDashboard } from './harness.ts';

// Signing in through the dashboard's own form, the security headers of its page, and the
// session list right after.

let dashboard: Dashboard;
let sessionId: string;

beforeAll(async () => {
  dashboard = await startDashboard();
  sessionId = newSessionId();
  const chunk = rewriteChunk(await validChunkFixture('recording-seq-0'), { sessionId });
  expect((await postChunk(dashboard.test.app, dashboard.test.first.projectKey, chunk)).statusCode).toBe(200);
}, 120_000);

afterAll(async () => {
  await dashboard?.close();
});

describe('the dashboard', () => {
  it('is served with a strict Content-Security-Policy, and the API paths stay the API', async () => {
    const page = await fetch(`${dashboard.base}/sessions`, { headers: { accept: 'text/html' } });
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    const policy = page.headers.get('content-security-policy') ?? '';
    const directives = new Map(
      policy.split(';').map((directive) => {
        const [name = '', ...sources] = directive.trim().split(/\s+/);
        return [name, sources] as const;
      }),
    );
    // Scripts from this origin only: no inline script, no eval, anywhere in the policy.
    expect(directives.get('script-src')).toEqual(["'self'"]);
    expect(policy).not.toContain('unsafe-eval');
    // The relaxations are for the replay player (README, Replay) and for what is not a script:
    // the recorded page's inline styles and its stylesheets, images, fonts and media, rebuilt by
    // rrweb in its script-less sandboxed iframe, which inherits this policy.
    expect(directives.get('style-src')).toEqual(["'self'", "'unsafe-inline'", 'https:', 'http:']);
    expect(directives.get('object-src')).toEqual(["'none'"]);
    expect(directives.get('default-src')).toEqual(["'self'"]);
    expect(directives.get('connect-src')).toEqual(["'self'"]);
    expect(page.headers.get('x-content-type-options')).toBe('nosniff');
    const html = await page.text();
    expect(html).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
    // An unknown API path is the API's 404, even for a browser.
    const api = await fetch(`${dashboard.base}/v1/nothing`, { headers: { accept: 'text/html' } });
    expect(api.status).toBe(404);
    expect(await api.json()).toMatchObject({ code: 'not_found' });
  });

  it('signs in with a password and lists the project’s sessions; the pages pass axe-core', async () => {
    // Signed out, GET /v1/me answers 401 and sends the app to the sign-in page; a wrong password
    // is a 401 too.
    const { page, errors } = await dashboard.open('/sessions', { allow: ['401 /v1/me', '401 /auth/login'] });
    await page.waitForURL(/\/login\?next=%2Fsessions$/);
    await expectAccessible(page);
    // On an IP address no passkey can work (test/passkeys.test.ts signs in on localhost): none is
    // offered beside the form.
    await page.getByLabel('E-mail address').waitFor();
    expect(await page.getByRole('button', { name: 'Use a passkey' }).count()).toBe(0);

    await page.getByLabel('E-mail address').fill(dashboard.people.viewer.email);
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
      dashboard.test.first.project.id,
    );
    await expectAccessible(page);

    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.waitForURL(/\/login$/);
    expect(errors).toEqual([]);
    await page.context().close();
  });
});
