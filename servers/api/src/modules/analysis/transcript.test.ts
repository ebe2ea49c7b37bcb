import { describe, expect, it } from 'vitest';
import { buildReproduction } from './repro.ts';
import { createTimelineBuilder, type TimelineItem } from './timeline.ts';
import { buildTranscript, formatDuration, formatOffset, type TranscriptSources } from './transcript.ts';

// The transcript and reproduction of a session as the browser SDK records one (rrweb snapshot and
// mutations with the SDK's masking: text as `*`, typed values as `*`), built without a database.

const T0 = Date.UTC(2026, 10, 20, 10, 0, 0);
const element = (
  id: number,
  tagName: string,
  attributes: Record<string, string>,
  childNodes: unknown[] = [],
) => ({
  type: 2,
  id,
  tagName,
  attributes,
  childNodes,
});
const text = (id: number, textContent: string) => ({ type: 3, id, textContent });

/** A shop page: an unmasked heading and button, a masked note, a labelled e-mail field, an icon button, two "Remove" buttons. */
const snapshot = {
  type: 0,
  id: 1,
  childNodes: [
    element(2, 'html', {}, [
      element(3, 'body', {}, [
        element(4, 'main', {}, [
          element(5, 'h1', { class: 'svc-unmask' }, [text(6, 'Shop')]),
          element(7, 'p', { id: 'note' }, [text(8, '******* **** ** *** ********')]),
          element(9, 'label', { class: 'svc-unmask' }, [
            text(10, 'Email '),
            element(11, 'input', { id: 'email', type: 'email' }),
          ]),
          element(12, 'button', { id: 'add', class: 'svc-unmask', type: 'button' }, [
            text(13, 'Add to cart'),
          ]),
          element(14, 'button', { id: 'cart-link', 'aria-label': 'Open the cart' }, [
            element(15, 'span', {}, [text(16, '*')]),
          ]),
          element(17, 'button', { 'data-testid': 'checkout' }, [text(18, '***** ***')]),
          element(19, 'button', { class: 'svc-unmask remove' }, [text(20, 'Remove')]),
          element(21, 'button', { class: 'svc-unmask remove' }, [text(22, 'Remove')]),
          element(23, 'input', { id: 'agree', type: 'checkbox' }),
          element(24, 'div', { id: 'r-1234-list' }),
        ]),
      ]),
    ]),
  ],
};

const rrweb = (t: number, data: Record<string, unknown>) => ({ t, type: 'rrweb', data });
const click = (t: number, id: number, x = 100, y = 100) =>
  rrweb(t, { type: 3, data: { source: 2, type: 2, id, x, y } });
const input = (t: number, id: number, value: Record<string, unknown>) =>
  rrweb(t, { type: 3, data: { source: 5, id, ...value } });
const mutation = (t: number, change: Record<string, unknown>) =>
  rrweb(t, { type: 3, data: { source: 0, adds: [], removes: [], texts: [], attributes: [], ...change } });

function events(): Array<Record<string, unknown>> {
  return [
    { t: T0, type: 'nav', url: 'https://shop.test/products?ref=mail', load: true },
    rrweb(T0 + 1, {
      type: 4,
      data: { href: 'https://shop.test/products?ref=mail', width: 1280, height: 720 },
    }),
    rrweb(T0 + 2, { type: 2, data: { node: snapshot, initialOffset: { top: 0, left: 0 } } }),
    // Typing an e-mail: each keystroke an input event, masked.
    input(T0 + 1_000, 11, { text: '*' }),
    input(T0 + 1_100, 11, { text: '**' }),
    input(T0 + 1_200, 11, { text: '***********' }),
    click(T0 + 2_000, 13),
    mutation(T0 + 2_100, { texts: [{ id: 8, value: '*****' }] }),
    {
      t: T0 + 2_050,
      type: 'request',
      initiator: 'fetch',
      method: 'POST',
      url: 'https://shop.test/api/cart',
      status: 500,
      durationMs: 41,
    },
    {
      t: T0 + 2_060,
      type: 'request',
      initiator: 'fetch',
      method: 'GET',
      url: 'https://shop.test/api/ok',
      status: 200,
      durationMs: 12,
    },
    // Three quick clicks on the icon button: one rage click.
    click(T0 + 3_000, 16, 300, 40),
    click(T0 + 3_200, 16, 302, 41),
    click(T0 + 3_400, 15, 301, 40),
    mutation(T0 + 3_500, {}),
    click(T0 + 5_000, 20),
    mutation(T0 + 5_050, {}),
    input(T0 + 6_000, 23, { text: 'on', isChecked: true }),
    { t: T0 + 6_500, type: 'custom', name: 'purchase', props: { plan: 'pro' } },
    // A button added later, then clicked: named from the added nodes.
    mutation(T0 + 7_000, {
      adds: [
        {
          parentId: 4,
          nextId: null,
          node: element(30, 'button', { id: 'pay', class: 'svc-unmask' }, [text(31, 'Pay now')]),
        },
      ],
    }),
    { t: T0 + 7_100, type: 'nav', url: 'https://shop.test/checkout/8341' },
    click(T0 + 8_000, 31),
    mutation(T0 + 8_010, {}),
    {
      t: T0 + 8_020,
      type: 'error',
      name: 'TypeError',
      message: 'cart has no items',
      source: 'onerror',
      stack:
        'TypeError: cart has no items\n    at pay (https://shop.test/assets/index-1.js:1:200)\n    at HTMLButtonElement.<anonymous> (https://shop.test/assets/index-1.js:1:500)',
    },
    { t: T0 + 9_000, type: 'gap', fromT: T0 + 9_000, toT: T0 + 41_000, reason: 'hidden' },
    // The checkout button, whose text is masked: clicked, and nothing happens (dead).
    click(T0 + 42_000, 18),
    { t: T0 + 44_000, type: 'vital', name: 'INP', value: 612, rating: 'poor' },
  ];
}

function timeline(options: { locators?: boolean } = {}): TimelineItem[] {
  const builder = createTimelineBuilder({ routePatterns: [], ...options });
  const all = events();
  // Two chunks, as the SDK would send them.
  builder.push(0, all.slice(0, 10));
  builder.push(1, all.slice(10));
  return builder.finish();
}

function sources(items: TimelineItem[]): TranscriptSources {
  return {
    session: {
      id: 'ses_01JTRANSCRIPTTRANSCRIPTTRAN',
      startedAt: T0,
      durationMs: 44_500,
      url: 'https://shop.test/products?ref=mail',
      browserName: 'Chrome',
      browserVersion: '131',
      osName: 'macOS',
      osVersion: '14',
      device: 'desktop',
      viewportWidth: 1280,
      viewportHeight: 720,
      release: '4.2.0',
      environment: 'production',
      userId: 'u_42',
      recordingMode: 'always',
    },
    items,
    errorFrames: new Map([
      ['1.12', [{ function: 'pay', file: 'src/checkout.ts', line: 7, column: 15, mapped: true }]],
    ]),
    calls: [],
    findings: [],
    missing: [{ fromSeq: 2, toSeq: 3 }],
  };
}

describe('transcript', () => {
  const transcript = buildTranscript(sources(timeline()));
  const lines = transcript.text.split('\n');

  it('tells pages, clicks by role and name, typing without values, failed requests, errors with frames and gaps', () => {
    expect(transcript.header).toEqual([
      'Session ses_01JTRANSCRIPTTRANSCRIPTTRAN, started 2026-11-20T10:00:00.000Z, lasted 44.5 s',
      'Chrome 131 on macOS 14; desktop; viewport 1280×720; release 4.2.0; environment production; recording always',
      'User u_42',
      '2 pages, 7 clicks, 1 rage click, 1 dead click, 2 fields typed into, 1 error, 1 failed request',
      'Missing data: chunks 2–3 never arrived',
    ]);
    expect(lines.slice(transcript.header.length + 1)).toEqual([
      '00:00 [0.0] Opened /products?ref=mail (route /products)',
      '00:01 [0.3] Typed into textbox "Email" (#email) (value not recorded)',
      '00:02 [0.6] Clicked button "Add to cart" (#add)',
      '00:02 [0.8] Request POST /api/cart failed: HTTP 500 after 41 ms',
      '00:03 [1.0] Rage-clicked button "Open the cart" (#cart-link): 3 clicks in 400 ms',
      '00:05 [1.4] Clicked button "Remove" (main > button.svc-unmask.remove:nth-of-type(4))',
      '00:06 [1.6] Checked checkbox (#agree)',
      '00:06 [1.7] Event "purchase" {"plan":"pro"}',
      '00:07 [1.9] Went to /checkout/8341 (route /checkout/:id)',
      '00:08 [1.10] Clicked button "Pay now" (#pay)',
      '00:08 [1.12] Error TypeError: cart has no items (onerror)',
      '      at pay (src/checkout.ts:7:15) [source map]',
      '00:09 [1.13] Nothing recorded for 32 s: the tab was hidden',
      '00:42 [1.14] Clicked button [masked text] ([data-testid="checkout"]); nothing happened (dead click)',
      '00:44 [1.15] INP 612 ms (poor)',
    ]);
  });

  it('never holds masked text or typed values', () => {
    expect(transcript.text).not.toMatch(/\*{2,}/);
    expect(JSON.stringify(transcript)).not.toMatch(/\*\*\*/);
  });

  it('formats offsets and durations', () => {
    expect(formatOffset(3_723_000)).toBe('1:02:03');
    expect(formatOffset(59_999)).toBe('00:59');
    expect(formatDuration(310)).toBe('310 ms');
    expect(formatDuration(4_240)).toBe('4.2 s');
    expect(formatDuration(751_000)).toBe('12 min 31 s');
    expect(formatDuration(3_720_000)).toBe('1 h 02 min');
  });

  it('folds repeats in a row into one entry that keeps their ids', () => {
    const failing = (t: number) => ({
      t,
      type: 'request',
      method: 'GET',
      url: 'https://shop.test/api/poll',
      failure: 'timeout',
      durationMs: 10_000,
    });
    const builder = createTimelineBuilder({});
    builder.push(0, [failing(T0), failing(T0 + 1), failing(T0 + 2)]);
    const folded = buildTranscript({ ...sources(builder.finish()), missing: [] });
    expect(folded.entries).toHaveLength(1);
    expect(folded.entries[0]).toMatchObject({ id: '0.0', repeat: 3, repeatIds: ['0.1', '0.2'] });
    expect(folded.text).toContain('[0.0] Request GET /api/poll failed: no answer (timeout) after 10 s (×3)');
  });
});

describe('reproduction', () => {
  const reproduction = buildReproduction({
    session: sources([]).session,
    items: timeline({ locators: true }),
  });

  it('walks the navigation, clicks and typing with robust locators, placeholders for masked values', () => {
    expect(reproduction.steps).toEqual([
      '1. Open https://shop.test/products?ref=mail',
      '2. Type a email value (masked in the recording) into textbox "Email" (#email)',
      '3. Click button "Add to cart" (#add)',
      '4. Click button "Open the cart" (#cart-link) 3 times quickly',
      '5. Click button "Remove" (main > button.svc-unmask.remove:nth-of-type(4))',
      '6. Check checkbox (#agree)',
      '7. See the page go to https://shop.test/checkout/8341',
      '8. Click button "Pay now" (#pay)',
      '9. See the error "TypeError: cart has no items"',
      '10. Click button [masked text] ([data-testid="checkout"])',
    ]);
    const code = reproduction.script;
    expect(code).toContain('const BASE_URL = process.env.BASE_URL ?? "https://shop.test";');
    expect(code).toContain('await page.goto(new URL("/products?ref=mail", BASE_URL).href);');
    expect(code).toContain(
      'await page.getByRole("textbox", { name: "Email", exact: true }).fill("user@example.com"); // placeholder: the value was masked',
    );
    expect(code).toContain('await page.getByRole("button", { name: "Add to cart", exact: true }).click();');
    expect(code).toContain(
      'for (let click = 0; click < 3; click += 1) await page.getByRole("button", { name: "Open the cart", exact: true }).click();',
    );
    // Two buttons are named "Remove": the name is not unique, the CSS selector is.
    expect(code).toContain(
      'await page.locator("body > main > button.svc-unmask.remove:nth-of-type(4)").click();',
    );
    expect(code).toContain('await page.locator("#agree").check();');
    expect(code).toContain('await expect(page).toHaveURL(new URL("/checkout/8341", BASE_URL).href);');
    expect(code).toContain('await page.getByRole("button", { name: "Pay now", exact: true }).click();');
    expect(code).toContain('await page.getByTestId("checkout").click();');
    expect(code).toContain(
      'await expect.poll(() => errors).toEqual(expect.arrayContaining(["TypeError: cart has no items"]));',
    );
    expect(reproduction.notes).toEqual([
      '1 value was masked in the recording: the script types placeholders.',
    ]);
    expect(code).not.toMatch(/\*\*/);
  });
});

describe('checkouts', () => {
  /** The same page at each checkout, with the ids rrweb gives it then (from `first`). */
  const checkoutPage = (first: number, label: string) => ({
    type: 0,
    id: first,
    childNodes: [
      element(first + 1, 'html', {}, [
        element(first + 2, 'body', {}, [
          element(first + 3, 'main', {}, [
            element(first + 4, 'button', { class: 'svc-unmask' }, [text(first + 5, label)]),
          ]),
        ]),
      ]),
    ],
  });

  it('names clicks from the latest full snapshot and the mutations since, never from an earlier one', () => {
    const builder = createTimelineBuilder({ locators: true });
    const meta = (t: number) =>
      rrweb(t, { type: 4, data: { href: 'https://shop.test/cart', width: 1280, height: 720 } });
    builder.push(0, [
      { t: T0, type: 'nav', url: 'https://shop.test/cart', load: true },
      meta(T0 + 1),
      rrweb(T0 + 2, { type: 2, data: { node: checkoutPage(1, 'Checkout') } }),
      mutation(T0 + 1_000, { texts: [{ id: 6, value: 'Pay' }] }),
      click(T0 + 2_000, 5),
    ]);
    builder.push(1, [
      // The checkout: the same page with new ids, then a button added to it.
      meta(T0 + 30_000),
      rrweb(T0 + 30_001, { type: 2, data: { node: checkoutPage(101, 'Checkout') } }),
      mutation(T0 + 31_000, {
        adds: [
          {
            parentId: 104,
            nextId: null,
            node: element(120, 'button', { id: 'confirm', class: 'svc-unmask' }, [text(121, 'Confirm')]),
          },
        ],
      }),
      click(T0 + 32_000, 121),
      click(T0 + 34_000, 105),
      // An id of the page before the checkout: no longer a node of the page.
      click(T0 + 36_000, 5),
    ]);
    const clicks = builder.finish().filter((item) => item.kind === 'click');
    expect(clicks.map((item) => [item.id, item.element?.name ?? null, item.locator])).toEqual([
      ['0.4', 'Pay', 'page.getByRole("button", { name: "Pay", exact: true })'],
      ['1.3', 'Confirm', 'page.getByRole("button", { name: "Confirm", exact: true })'],
      ['1.4', 'Checkout', 'page.getByRole("button", { name: "Checkout", exact: true })'],
      ['1.5', null, null],
    ]);
  });
});
