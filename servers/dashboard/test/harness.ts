import { mkdir } from 'node:fs/promises';
import { type AddressInfo, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import AxeBuilder from '@axe-core/playwright';
import { CHROMIUM, CHROMIUM_ARGS } from '@svc-dev/chromium';
import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core';
import { expect } from 'vitest';
import { hashPassword } from '../../api/src/modules/accounts/passwords.ts';
import { insertUser } from '../../api/src/modules/accounts/repository.ts';
import type { Role } from '../../api/src/modules/orgs/roles.ts';
import { createTestApp, type TestApp } from '../../api/test/test-app.ts';
import type { Engine } from '../../api/test/test-database.ts';

// What every dashboard test starts from: the real server (its built dashboard, served on a real
// port whose URL is the public URL, so the sign-in origin check holds), one person per role in the
// first project's organization, headless Chromium, and checks shared by every page: no console
// error, no failed request, axe-core.

export const PASSWORD = 'correct horse battery staple';

/** A person of the test organization, one per role. */
export interface TestPerson {
  id: string;
  email: string;
  role: Role;
}

export interface Dashboard {
  test: TestApp;
  browser: Browser;
  /** `http://127.0.0.1:<port>` (or the `hostname` asked for): the server, the dashboard and the public URL. */
  base: string;
  people: Record<Role, TestPerson>;
  /**
   * A new browser context signed in as `person` (through `POST /auth/login`, so the cookie is
   * the browser's own), on `path`. `errors` collects console errors, page errors and every answer
   * of 400 or more, except those `allow` names (`"401 /v1/me"`).
   */
  open(path: string, options?: { as?: TestPerson; allow?: string[] }): Promise<OpenPage>;
  close(): Promise<void>;
}

export interface OpenPage {
  page: Page;
  context: BrowserContext;
  errors: string[];
}

/** A TCP port nothing listens on now. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/**
 * Starts the server with the dashboard and a browser; `environment` adds settings. `hostname`
 * names the server in its URL (`localhost` for WebAuthn, which refuses an IP address as the
 * relying party id); it listens on 127.0.0.1 either way.
 */
export async function startDashboard(
  options: { engine?: Engine; environment?: Record<string, string>; hostname?: string } = {},
): Promise<Dashboard> {
  const port = await freePort();
  const base = `http://${options.hostname ?? '127.0.0.1'}:${port}`;
  const test = await createTestApp(
    options.engine ?? 'pglite',
    { logger: false },
    { SVC_PUBLIC_URL: base, ...options.environment },
  );
  await test.app.listen({ host: '127.0.0.1', port });
  const passwordHash = await hashPassword(PASSWORD);
  const people = {} as Record<Role, TestPerson>;
  for (const role of ['owner', 'admin', 'member', 'viewer'] as const) {
    const email = `${role}@example.com`;
    const user = await insertUser(test.database.database, {
      email,
      name: `${role[0]?.toUpperCase()}${role.slice(1)} Person`,
      passwordHash,
      emailVerified: true,
    });
    if (user === undefined) throw new Error(`could not create ${email}`);
    await test.database.database
      .insertInto('organization_members')
      .values({ organization_id: test.first.project.organization_id, user_id: user.id, role })
      .execute();
    people[role] = { id: user.id, email, role };
  }
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: [...CHROMIUM_ARGS] });

  async function open(path: string, { as, allow = [] }: { as?: TestPerson; allow?: string[] } = {}) {
    const context = await browser.newContext({ baseURL: base, viewport: { width: 1280, height: 900 } });
    if (as !== undefined) {
      const answer = await context.request.post('/auth/login', {
        data: { email: as.email, password: PASSWORD },
        headers: { origin: base },
      });
      if (!answer.ok())
        throw new Error(`signing in as ${as.email}: ${answer.status()} ${await answer.text()}`);
    }
    const page = await context.newPage();
    const errors: string[] = [];
    page.on('console', (message) => {
      // The console's line for a failed request names no URL; the response handler below does.
      if (message.type() === 'error' && !message.text().startsWith('Failed to load resource'))
        errors.push(message.text());
    });
    page.on('pageerror', (error) => errors.push(error.message));
    page.on('response', (response) => {
      const failure = `${response.status()} ${new URL(response.url()).pathname}`;
      if (response.status() >= 400 && !allow.includes(failure)) errors.push(failure);
    });
    await page.goto(path);
    return { page, context, errors };
  }

  return {
    test,
    browser,
    base,
    people,
    open,
    async close() {
      await browser.close();
      await test.close();
    },
  };
}

/**
 * axe-core on the page as it is now: no serious or critical violation. `exclude` leaves out a
 * part that is not the app's interface (the replayed recording of a customer's page).
 */
export async function expectAccessible(page: Page, options: { exclude?: string } = {}): Promise<void> {
  const builder = new AxeBuilder({ page });
  if (options.exclude !== undefined) builder.exclude(options.exclude);
  const results = await builder.analyze();
  const serious = results.violations.filter(
    (violation) => violation.impact === 'serious' || violation.impact === 'critical',
  );
  expect(
    serious.map(
      (violation) =>
        `${violation.id}: ${violation.help} (${violation.nodes.map((node) => node.target).join(', ')})`,
    ),
  ).toEqual([]);
}

const SCREENSHOTS = fileURLToPath(new URL('../docs/screenshots/', import.meta.url));

/**
 * A screenshot of the page for the README. Written to `docs/screenshots/<name>.png` when
 * `SVC_UPDATE_SCREENSHOTS=1` (then committed), to a temporary folder otherwise.
 */
export async function screenshot(page: Page, name: string): Promise<string> {
  const folder =
    process.env.SVC_UPDATE_SCREENSHOTS === '1' ? SCREENSHOTS : join(tmpdir(), 'svc-dashboard-shots');
  await mkdir(folder, { recursive: true });
  const path = join(folder, `${name}.png`);
  await page.screenshot({ path, fullPage: false });
  return path;
}
