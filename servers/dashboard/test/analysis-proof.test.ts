import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { CHROMIUM, CHROMIUM_ARGS } from '@svc-dev/chromium';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type Dashboard, startDashboard } from './harness.ts';
import { type Json, sdkBundle } from './recorded-page.ts';

// Issue 24's proof of transcripts and reproductions: a small shop instrumented with the real
// browser SDK (default privacy: text and typed values masked) is used in Chromium; the server's
// transcript of the session names what was done (and holds nothing masked); the reproduction's
// Playwright script, run by Playwright's own test runner in Chromium against the same shop,
// walks the navigation, clicks and typing and reproduces the session's error. Against the shop
// with the bug fixed, the same script fails: it tests something.

const run = promisify(execFile);
const dashboardDirectory = join(dirname(fileURLToPath(import.meta.url)), '..');

/** What the page's private parts hold: none of it may reach the transcript or the script. */
const SECRET_NOTE = 'Private note of Ada Lovelace';
const TYPED_EMAIL = 'ada@lovelace.example';

function page(title: string, body: string, script: string, options: Json): string {
  return `<!doctype html><html lang="en"><meta charset="utf-8"><title>${title}</title>
<body>${body}
<script src="/sdk.js"></script>
<script>window.sdk = SvcSdk.init(${JSON.stringify(options)});
${script}</script></body></html>`;
}

interface Shop {
  origin: string;
  close(): Promise<void>;
}

/** The shop: a product page, a cart page whose checkout opens a single-page route; `fixed` has the bug fixed. */
async function serveShop(dashboard: Dashboard, options: { fixed: boolean }): Promise<Shop> {
  const sdk = await sdkBundle();
  const sdkOptions = {
    projectKey: dashboard.test.first.projectKey,
    endpoint: dashboard.base,
    release: '5.0.0',
    flushIntervalSec: 1,
    remoteConfig: false,
  };
  const pages: Record<string, string> = {
    '/': page(
      'Products',
      `<main>
  <h1 class="svc-unmask">Products</h1>
  <p id="note">${SECRET_NOTE}</p>
  <label for="email" class="svc-unmask">Email</label> <input id="email" type="email">
  <button id="add" class="svc-unmask" type="button">Add to cart</button>
  <button id="cart-link" type="button" aria-label="Open the cart"><span>&#128722;</span></button>
  <p id="added"></p>
</main>`,
      `document.getElementById('add').addEventListener('click', () => {
  document.getElementById('added').textContent = 'Added';
  void fetch('/api/cart', { method: 'POST', body: '{}' });
});
document.getElementById('cart-link').addEventListener('click', () => { location.href = '/cart'; });`,
      sdkOptions,
    ),
    '/cart': page(
      'Cart',
      `<main>
  <h1>Your cart</h1>
  <button data-testid="checkout" type="button">Check out</button>
  <section id="view"></section>
</main>`,
      `document.querySelector('[data-testid="checkout"]').addEventListener('click', () => {
  history.pushState({}, '', '/checkout/42');
  document.getElementById('view').innerHTML = '<button id="pay" type="button">Pay now</button><p id="paid"></p>';
  document.getElementById('pay').addEventListener('click', () => {
    ${options.fixed ? "document.getElementById('paid').textContent = 'Paid';" : "throw new TypeError('cart has no items');"}
  });
});`,
      sdkOptions,
    ),
  };
  const server: Server = createServer((request, response) => {
    const path = (request.url ?? '/').split('?')[0] as string;
    if (path === '/sdk.js') response.writeHead(200, { 'content-type': 'text/javascript' }).end(sdk);
    else if (path === '/api/cart')
      response.writeHead(500, { 'content-type': 'application/json' }).end('{"error":"down"}');
    else if (pages[path] !== undefined)
      response.writeHead(200, { 'content-type': 'text/html' }).end(pages[path]);
    else response.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no address');
  return {
    origin: `http://127.0.0.1:${address.port}`,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/** Uses the shop as a person would, in Chromium; the session's id once everything is flushed. */
async function useShop(dashboard: Dashboard, shop: Shop): Promise<string> {
  const context = await dashboard.browser.newContext({ viewport: { width: 1100, height: 700 } });
  const tab = await context.newPage();
  await tab.goto(`${shop.origin}/`);
  await tab.waitForFunction(() => (window as Json).sdk?.sessionId !== undefined);
  await tab.waitForTimeout(800);
  await tab.locator('#email').pressSequentially(TYPED_EMAIL, { delay: 15 });
  await tab.locator('#add').click();
  await tab.locator('#added').getByText('Added').waitFor();
  await tab.waitForTimeout(500);
  await tab.locator('#cart-link').click();
  await tab.waitForURL(`${shop.origin}/cart`);
  await tab.waitForFunction(() => (window as Json).sdk?.sessionId !== undefined);
  await tab.waitForTimeout(800);
  await tab.getByTestId('checkout').click();
  await tab.locator('#pay').click();
  await tab.waitForTimeout(800);
  const sessionId = await tab.evaluate(async () => {
    await (window as Json).sdk.flush();
    return (window as Json).sdk.sessionId as string;
  });
  await context.close();
  return sessionId;
}

/** Runs a generated script with Playwright's test runner in Chromium against `baseUrl`. */
async function runScript(script: string, baseUrl: string): Promise<{ passed: boolean; output: string }> {
  // Inside the dashboard package, so the script's `@playwright/test` import resolves.
  const folder = await mkdtemp(join(dashboardDirectory, '.repro-'));
  try {
    await writeFile(join(folder, 'session.spec.ts'), script);
    await writeFile(
      join(folder, 'playwright.config.ts'),
      `import { defineConfig } from '@playwright/test';
export default defineConfig({
  testDir: '.',
  outputDir: ${JSON.stringify(join(folder, 'test-results'))},
  workers: 1,
  retries: 0,
  timeout: 30_000,
  expect: { timeout: 5_000 },
  reporter: 'line',
  use: { launchOptions: { executablePath: ${JSON.stringify(CHROMIUM)}, args: ${JSON.stringify(CHROMIUM_ARGS)} } },
});
`,
    );
    const cli = join(dashboardDirectory, 'node_modules', '@playwright', 'test', 'cli.js');
    try {
      const { stdout, stderr } = await run(
        process.execPath,
        [cli, 'test', '--config', join(folder, 'playwright.config.ts')],
        {
          cwd: folder,
          env: { ...process.env, BASE_URL: baseUrl, CI: '1', FORCE_COLOR: '0' },
          timeout: 120_000,
        },
      );
      return { passed: true, output: `${stdout}${stderr}` };
    } catch (error) {
      const failure = error as { stdout?: string; stderr?: string };
      return { passed: false, output: `${failure.stdout ?? ''}${failure.stderr ?? ''}` };
    }
  } finally {
    await rm(folder, { recursive: true, force: true });
  }
}

let dashboard: Dashboard;
let shop: Shop;
let fixedShop: Shop;
let sessionId: string;

beforeAll(async () => {
  dashboard = await startDashboard();
  shop = await serveShop(dashboard, { fixed: false });
  fixedShop = await serveShop(dashboard, { fixed: true });
  sessionId = await useShop(dashboard, shop);
  await dashboard.test.processingWorker.runUntilIdle();
}, 180_000);

afterAll(async () => {
  await shop?.close();
  await fixedShop?.close();
  await dashboard?.close();
});

async function api(method: 'GET' | 'POST', url: string): Promise<Json> {
  const answer = await dashboard.test.app.inject({ method, url, headers: dashboard.test.first.headers });
  expect(answer.statusCode, answer.body).toBe(200);
  return answer.json();
}

it('tells the recorded session: pages, clicks by role and name, typing without its value, the failed request and the error', async () => {
  const transcript = await api('GET', `/v1/sessions/${sessionId}/transcript`);
  const lines = (transcript.text as string)
    .split('\n')
    .map((line) => line.replace(/^[\d:]+ \[[^\]]+\] /, ''));
  const expected = [
    'Opened / (route /)',
    'Typed into textbox "Email" (#email) (value not recorded)',
    'Clicked button "Add to cart" (#add)',
    'Request POST /api/cart failed: HTTP 500',
    'Clicked button "Open the cart" (#cart-link)',
    'Opened /cart (route /cart)',
    'Clicked button [masked text] ([data-testid="checkout"])',
    'Went to /checkout/42 (route /checkout/:id)',
    'Clicked button [masked text] (#pay)',
    'Error TypeError: cart has no items (onerror)',
  ];
  let from = 0;
  for (const wanted of expected) {
    const at = lines.findIndex((line, index) => index >= from && line.startsWith(wanted));
    expect(at, `"${wanted}" after line ${from} of\n${transcript.text}`).toBeGreaterThanOrEqual(from);
    from = at + 1;
  }
  // Nothing masked reaches the transcript: neither the note nor what was typed.
  for (const secret of [SECRET_NOTE, 'Lovelace', TYPED_EMAIL, 'ada@'])
    expect(transcript.text).not.toContain(secret);
  expect(JSON.stringify(transcript)).not.toContain('Lovelace');
});

it("reproduces the session: Playwright's runner passes the generated script against the shop, and fails it once the bug is fixed", async () => {
  const reproduction = await api('POST', `/v1/sessions/${sessionId}/repro`);
  const script: string = reproduction.script;
  expect(script).toContain(
    'await page.getByRole("textbox", { name: "Email", exact: true }).fill("user@example.com");',
  );
  expect(script).toContain('await page.getByRole("button", { name: "Add to cart", exact: true }).click();');
  expect(script).toContain('await page.getByRole("button", { name: "Open the cart", exact: true }).click();');
  expect(script).toContain('await expect(page).toHaveURL(new URL("/cart", BASE_URL).href);');
  expect(script).toContain('await page.getByTestId("checkout").click();');
  expect(script).toContain('await expect(page).toHaveURL(new URL("/checkout/42", BASE_URL).href);');
  expect(script).toContain('await page.locator("#pay").click();');
  expect(script).not.toContain('Lovelace');
  expect(reproduction.notes).toEqual(['1 value was masked in the recording: the script types placeholders.']);

  const reproduced = await runScript(script, shop.origin);
  expect(reproduced.passed, reproduced.output).toBe(true);
  expect(reproduced.output).toMatch(/1 passed/);

  const fixed = await runScript(script, fixedShop.origin);
  expect(fixed.passed, fixed.output).toBe(false);
  expect(fixed.output).toContain('TypeError: cart has no items');
}, 120_000);
