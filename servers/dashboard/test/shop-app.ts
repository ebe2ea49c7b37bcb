import { createServer, type Server } from 'node:http';
import type { Browser } from 'playwright-core';
import type { Dashboard } from './harness.ts';
import { type Json, sdkBundle } from './recorded-page.ts';

// A small multi-page shop instrumented with the real browser SDK, for the insights proof: a
// product page (a button that answers, a button that does nothing, a tall page to scroll, a link
// to the cart), a cart page (page loads), and a checkout route the cart opens as a single-page
// app would (pushState), where paying tracks `purchase`.

const PAGES: Record<string, { title: string; body: string; script: string }> = {
  '/products': {
    title: 'Products',
    body: `<main>
  <h1>Products of Ada</h1>
  <button id="buy" class="btn primary" type="button" style="width:200px;height:40px">Add to cart</button>
  <button class="ghost" type="button" style="width:200px;height:40px">Does nothing</button>
  <p id="added"></p>
  <div style="height:2400px">A long description</div>
  <a id="to-cart" href="/cart">Go to the cart</a>
</main>`,
    script: `document.getElementById('buy').addEventListener('click', () => {
  document.getElementById('added').textContent = 'Added';
});`,
  },
  '/cart': {
    title: 'Cart',
    body: `<main>
  <h1>Your cart</h1>
  <button id="checkout" type="button">Check out</button>
  <section id="view"></section>
</main>`,
    script: `document.getElementById('checkout').addEventListener('click', () => {
  history.pushState({}, '', '/checkout/8341');
  const view = document.getElementById('view');
  view.innerHTML = '<button id="pay" type="button">Pay now</button><p id="paid"></p>';
  document.getElementById('pay').addEventListener('click', () => {
    window.sdk.track('purchase', { plan: 'pro' });
    document.getElementById('paid').textContent = 'Paid';
  });
});`,
  },
};

export interface ShopApp {
  /** The origin, without a trailing slash. */
  origin: string;
  close(): Promise<void>;
}

/** Serves the shop with the SDK sending to `dashboard.base` (release 4.2.0, flushing every second). */
export async function serveShop(dashboard: Dashboard, projectKey: string): Promise<ShopApp> {
  const sdk = await sdkBundle();
  const options = {
    projectKey,
    endpoint: dashboard.base,
    release: '4.2.0',
    flushIntervalSec: 1,
    remoteConfig: false,
  };
  const server: Server = createServer((request, response) => {
    const path = (request.url ?? '/').replace(/\?.*$/, '');
    if (path === '/sdk.js') {
      response.writeHead(200, { 'content-type': 'text/javascript' }).end(sdk);
      return;
    }
    const page = PAGES[path.startsWith('/checkout/') ? '/cart' : path];
    if (page === undefined) {
      response.writeHead(404).end();
      return;
    }
    response.writeHead(200, { 'content-type': 'text/html' }).end(`<!doctype html><html lang="en">
<meta charset="utf-8"><title>${page.title}</title>
<body>${page.body}
<script src="/sdk.js"></script>
<script>window.sdk = SvcSdk.init(${JSON.stringify(options)});
${page.script}</script></body></html>`);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no address');
  return {
    origin: `http://127.0.0.1:${address.port}`,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/** What a shopper did. */
export interface Visit {
  sessionId: string;
  /** Whether they paid (walked the funnel to its end) or left at the cart. */
  paid: boolean;
}

/**
 * One shopper in a fresh tab of `width` × 800: on /products clicks "Add to cart" once, rage
 * clicks the button that does nothing (3 clicks in 400 ms), scrolls 1,500 px down, then to the
 * bottom, goes to the cart by its link; there checks out (a pushState route) and pays, unless `abandon`.
 */
export async function shop(
  browser: Browser,
  app: ShopApp,
  options: { width: number; abandon?: boolean },
): Promise<Visit> {
  const context = await browser.newContext({ viewport: { width: options.width, height: 800 } });
  const tab = await context.newPage();
  await tab.goto(`${app.origin}/products?ref=mail`);
  await tab.waitForFunction(() => (window as Json).sdk?.sessionId !== undefined);
  await tab.waitForTimeout(700);
  await tab.locator('#buy').click({ position: { x: 50, y: 10 } });
  await tab.waitForTimeout(1_500);
  const ghost = tab.locator('button.ghost');
  for (let click = 0; click < 3; click++) {
    await ghost.click({ position: { x: 100, y: 20 }, delay: 0 });
    await tab.waitForTimeout(150);
  }
  await tab.waitForTimeout(1_600);
  await tab.mouse.wheel(0, 1_500);
  await tab.waitForFunction(() => window.scrollY >= 1_500);
  await tab.waitForTimeout(1_200);
  // Then to the bottom, and a pause for the recorder's throttled scroll event: scrolled into view
  // by the click on the link itself, the last position raced the page's unload.
  await tab.mouse.wheel(0, 5_000);
  await tab.waitForFunction(
    () => window.scrollY + window.innerHeight >= document.documentElement.scrollHeight - 1,
  );
  await tab.waitForTimeout(1_200);
  await tab.locator('#to-cart').click();
  await tab.waitForURL(`${app.origin}/cart`);
  await tab.waitForFunction(() => (window as Json).sdk?.sessionId !== undefined);
  await tab.waitForTimeout(1_200);
  if (options.abandon !== true) {
    await tab.locator('#checkout').click();
    await tab.waitForTimeout(1_200);
    await tab.locator('#pay').click();
    await tab.waitForTimeout(1_200);
  }
  // Something after the last click, so its second is observed; then the last chunks go out.
  await tab.mouse.move(5, 5);
  await tab.waitForTimeout(1_200);
  await tab.mouse.move(10, 10);
  const sessionId = await tab.evaluate(async () => {
    await (window as Json).sdk.flush();
    return (window as Json).sdk.sessionId as string;
  });
  await context.close();
  return { sessionId, paid: options.abandon !== true };
}
