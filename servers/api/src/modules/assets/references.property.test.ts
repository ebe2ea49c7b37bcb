import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { cssReferences, rewriteCssUrls } from './references.ts';

// Invariants of the stylesheet reading the archive and its serving rely on.

const BASE = 'https://example.com/css/site.css';

/** Stylesheets made of rules with url()s and @imports in any quoting, and text around them. */
const pathArbitrary = fc.stringMatching(/^[a-z0-9/_.-]{1,20}$/);
const pieceArbitrary = fc.oneof(
  pathArbitrary.map((path) => `a { background: url(${path}) }`),
  pathArbitrary.map((path) => `b { background: url("${path}") }`),
  pathArbitrary.map((path) => `@import '${path}';`),
  pathArbitrary.map((path) => `@font-face { src: url('${path}') }`),
  fc.stringMatching(/^[a-z {}:;]{0,20}$/),
);
const cssArbitrary = fc.array(pieceArbitrary, { maxLength: 12 }).map((pieces) => pieces.join('\n'));

describe('stylesheet references', () => {
  it('rewriting with an empty map is the identity', () => {
    fc.assert(
      fc.property(cssArbitrary, (css) => {
        expect(rewriteCssUrls(css, BASE, () => undefined)).toBe(css);
      }),
    );
  });

  it('after rewriting every reference, the references are exactly the mapped ones', () => {
    fc.assert(
      fc.property(cssArbitrary, (css) => {
        const references = cssReferences(css, BASE);
        const mapped = new Map(
          references.map((reference, index) => [reference.url, `https://archive.test/${index}`]),
        );
        const rewritten = rewriteCssUrls(css, BASE, (url) => mapped.get(url));
        expect(new Set(cssReferences(rewritten, BASE).map((reference) => reference.url))).toEqual(
          new Set(mapped.values()),
        );
      }),
    );
  });
});
