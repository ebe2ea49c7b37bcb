import { describe, expect, it } from 'vitest';
import {
  cssReferences,
  eventReferences,
  resolveAssetUrl,
  rewriteCssUrls,
  snapshotReferences,
} from './references.ts';

describe('resolveAssetUrl', () => {
  it.each([
    ['../fonts/a.woff2#x', 'https://cdn.example.com/css/site.css', 'https://cdn.example.com/fonts/a.woff2'],
    ['//cdn.example.com/a.css', 'https://example.com/', 'https://cdn.example.com/a.css'],
    ['/a.css?v=2', 'http://example.com/x/y', 'http://example.com/a.css?v=2'],
    ['data:font/woff2;base64,AAAA', 'https://example.com/', undefined],
    ['javascript:alert(1)', 'https://example.com/', undefined],
    ['a.css', undefined, undefined],
    ['', 'https://example.com/', undefined],
  ])('%s against %s is %s', (value, base, expected) => {
    expect(resolveAssetUrl(value, base)).toBe(expected);
  });
});

describe('cssReferences', () => {
  it('reads @import strings and urls, fonts inside @font-face and images elsewhere, skipping comments', () => {
    const css = `@import "base.css"; @import url('print.css') print;
      /* url(commented.png) */
      @font-face { font-family: A; src: url(a.woff2) format("woff2"), url("a.woff") }
      body { background: url( /bg.png ) } .x { mask: url(data:image/svg+xml,abc) }`;
    expect(cssReferences(css, 'https://example.com/css/site.css')).toEqual([
      { url: 'https://example.com/css/base.css', kind: 'stylesheet' },
      { url: 'https://example.com/css/print.css', kind: 'stylesheet' },
      { url: 'https://example.com/css/a.woff2', kind: 'font' },
      { url: 'https://example.com/css/a.woff', kind: 'font' },
      { url: 'https://example.com/bg.png', kind: 'image' },
    ]);
  });
});

describe('rewriteCssUrls', () => {
  const base = 'https://example.com/css/site.css';
  it('replaces what the map knows and leaves the rest byte for byte', () => {
    const css = `@import 'base.css'; a { background: url(bg.png) } b { background: url("other.png") }`;
    const map = new Map([
      ['https://example.com/css/base.css', '/v1/assets/1'],
      ['https://example.com/css/bg.png', '/v1/assets/2'],
    ]);
    expect(rewriteCssUrls(css, base, (url) => map.get(url))).toBe(
      `@import "/v1/assets/1"; a { background: url("/v1/assets/2") } b { background: url("other.png") }`,
    );
  });
  it('changes nothing when nothing is mapped', () => {
    const css = `@import "x.css"; a { b: url( 'y.png' ) } /* url(z) */`;
    expect(rewriteCssUrls(css, base, () => undefined)).toBe(css);
  });
});

describe('snapshotReferences and eventReferences', () => {
  const node = {
    type: 0,
    id: 1,
    childNodes: [
      {
        type: 2,
        tagName: 'html',
        id: 2,
        attributes: {},
        childNodes: [
          {
            type: 2,
            tagName: 'link',
            id: 3,
            attributes: { rel: 'Stylesheet preload', href: '/site.css' },
            childNodes: [],
          },
          {
            type: 2,
            tagName: 'link',
            id: 4,
            attributes: { rel: 'icon', href: '/favicon.ico' },
            childNodes: [],
          },
          {
            type: 2,
            tagName: 'link',
            id: 5,
            attributes: {
              rel: 'stylesheet',
              href: 'https://cdn.example.com/css/lib.css',
              _cssText: '.a { background: url(i.png) }',
            },
            childNodes: [],
          },
          {
            type: 2,
            tagName: 'style',
            id: 6,
            attributes: {},
            childNodes: [{ type: 3, id: 7, isStyle: true, textContent: '@import "/inline.css";' }],
          },
          { type: 2, tagName: 'img', id: 8, attributes: { src: 'logo.png' }, childNodes: [] },
        ],
      },
    ],
  };
  it('finds stylesheet links, inline styles and images, resolved against the page', () => {
    expect(snapshotReferences(node, 'https://shop.example.com/cart/')).toEqual([
      { url: 'https://shop.example.com/site.css', kind: 'stylesheet' },
      { url: 'https://cdn.example.com/css/lib.css', kind: 'stylesheet' },
      { url: 'https://cdn.example.com/css/i.png', kind: 'image' },
      { url: 'https://shop.example.com/inline.css', kind: 'stylesheet' },
      { url: 'https://shop.example.com/cart/logo.png', kind: 'image' },
    ]);
  });
  it('reads full snapshots only, with the meta event before them as the base', () => {
    const events = [
      { t: 1, type: 'rrweb', data: { type: 4, data: { href: 'https://shop.example.com/cart/' } } },
      { t: 2, type: 'rrweb', data: { type: 2, data: { node } } },
      { t: 3, type: 'rrweb', data: { type: 3, data: { source: 0, adds: [{ node }] } } },
      { t: 4, type: 'nav', url: 'https://shop.example.com/' },
    ];
    expect(eventReferences(events).map((reference) => reference.url)).toContain(
      'https://shop.example.com/cart/logo.png',
    );
    expect(eventReferences(events.slice(2))).toEqual([]);
  });
});
