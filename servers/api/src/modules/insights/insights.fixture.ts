import { chunkBytes, sessionMeta, type WireItem } from '../../../test/call-timelines.ts';

// A session of a shop for insight tests: its events and its chunks as an SDK sends them.

export const T0 = Date.UTC(2026, 10, 20, 10, 0, 0);

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
const text = (id: number) => ({ type: 3, id, textContent: '*****' });

/** A product page: main > [button#buy.btn.primary, button.ghost, a#next] with masked texts. */
const snapshot = {
  type: 0,
  id: 1,
  childNodes: [
    element(2, 'html', {}, [
      element(3, 'body', {}, [
        element(5, 'main', {}, [
          element(10, 'button', { id: 'buy', class: 'btn primary wide', 'aria-label': 'Buy now' }, [
            text(110),
          ]),
          element(11, 'button', { class: 'ghost' }, [text(111)]),
          element(12, 'a', { id: 'next', href: '/orders/123' }, [text(112)]),
        ]),
      ]),
    ]),
  ],
};

const rrweb = (t: number, data: Record<string, unknown>): WireItem =>
  ({ t, type: 'rrweb', data }) as WireItem;
const click = (t: number, id: number, x: number, y: number, offsets = {}) =>
  rrweb(t, { type: 3, data: { source: 2, type: 2, id, x, y, ...offsets } });
const mutation = (t: number, extra: Record<string, unknown> = {}) =>
  rrweb(t, { type: 3, data: { source: 0, adds: [], removes: [], texts: [], attributes: [], ...extra } });

/** Two page views: a product page (a click answered, a rage click on a dead button, a scroll, vitals), then an SPA route. */
export function sessionEvents(options: { width?: number; lcp?: number; start?: number } = {}): WireItem[] {
  const { width = 1280, lcp = 1_800, start = T0 } = options;
  return eventsAt(start, width, lcp);
}

function eventsAt(t0: number, width: number, lcp: number): WireItem[] {
  return [
    rrweb(t0, {
      type: 4,
      data: { href: 'https://shop.test/products?ref=mail', width, height: 700, dh: 3000 },
    }),
    rrweb(t0 + 5, { type: 2, data: { node: snapshot, initialOffset: { top: 0, left: 0 } } }),
    click(t0 + 1_000, 10, 100, 200, { ox: 0.5, oy: 0.25 }),
    mutation(t0 + 1_200, { attributes: [{ id: 10, attributes: { class: 'btn busy' } }] }),
    click(t0 + 2_000, 11, 300, 400),
    click(t0 + 2_200, 111, 302, 401),
    click(t0 + 2_400, 11, 299, 398),
    rrweb(t0 + 5_000, { type: 3, data: { source: 3, id: 1, x: 0, y: 1_500, dh: 3_000 } }),
    { t: t0 + 6_000, type: 'vital', name: 'LCP', value: lcp, rating: 'good' } as WireItem,
    { t: t0 + 6_000, type: 'vital', name: 'CLS', value: 0.05, rating: 'good' } as WireItem,
    { t: t0 + 7_000, type: 'nav', url: 'https://shop.test/orders/123' } as WireItem,
    mutation(t0 + 7_050, {
      adds: [
        {
          parentId: 5,
          nextId: 10,
          node: element(20, 'section', { class: 'order' }, [element(21, 'button', { id: 'pay' })]),
        },
      ],
    }),
    click(t0 + 8_000, 21, 50, 60, { ox: 1, oy: 0 }),
    mutation(t0 + 8_100),
    { t: t0 + 9_000, type: 'vital', name: 'INP', value: 350, rating: 'needs-improvement' } as WireItem,
    rrweb(t0 + 12_000, { type: 3, data: { source: 1, positions: [{ x: 1, y: 1, id: 5, timeOffset: 0 }] } }),
  ];
}

/** The events cut into `parts` chunks, in time order. */
export function chunksOf(sessionId: string, events: readonly WireItem[], cuts: readonly number[]): Buffer[] {
  const start = (events[0] as WireItem).t;
  const bounds = [0, ...cuts, events.length];
  return bounds.slice(1).map((end, seq) =>
    chunkBytes({
      sessionId,
      seq,
      sentAt: (events[end - 1] as WireItem).t + 100,
      ...(seq === 0
        ? { meta: { ...sessionMeta(start, { release: '1.2.0' }), url: 'https://shop.test/products' } }
        : {}),
      events: events.slice(bounds[seq], end),
    }),
  );
}
