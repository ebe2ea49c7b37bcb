import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { normalizeRoute } from './index.ts';

/** A segment that is never an id: lowercase letters and hyphens, at most 12 (hex needs 16). */
const word = fc.stringMatching(/^[a-z-]{1,12}$/);
const hex = fc.string({ unit: fc.constantFrom(...'0123456789abcdefABCDEF'), minLength: 16, maxLength: 40 });
const id = fc.oneof(
  fc.nat().map(String),
  fc.uuid(),
  fc.ulid(),
  hex,
  fc.stringMatching(/^[A-Za-z0-9]{18,30}$/).map((text) => `a1${text}`),
);
/** Any segment, id or not, as paths carry them (no `/`, `?` or `#`). */
const segment = fc.oneof(word, id, fc.stringMatching(/^[A-Za-z0-9._~%:-]{1,24}$/));
const suffix = fc.oneof(
  fc.constant(''),
  fc.stringMatching(/^\?[^#]{0,20}$/),
  fc.stringMatching(/^#.{0,20}$/),
  fc.stringMatching(/^\?[^#]{0,10}#.{0,10}$/),
);
const origin = fc.constantFrom('', 'https://app.example.com', 'http://localhost:8080');
const path = fc.array(segment, { maxLength: 8 }).map((segments) => `/${segments.join('/')}`);

describe('normalizeRoute, properties', () => {
  it('is idempotent', () => {
    fc.assert(
      fc.property(origin, path, suffix, (host, pathname, rest) => {
        const route = normalizeRoute(`${host}${pathname}${rest}`);
        expect(normalizeRoute(route)).toBe(route);
      }),
    );
  });

  it('ignores the origin, the query and the hash', () => {
    fc.assert(
      fc.property(origin, path, suffix, (host, pathname, rest) => {
        expect(normalizeRoute(`${host}${pathname}${rest}`)).toBe(normalizeRoute(pathname));
      }),
    );
  });

  it('leaves a path without ids unchanged', () => {
    fc.assert(
      fc.property(fc.array(word, { maxLength: 8 }), (words) => {
        const pathname = `/${words.join('/')}`;
        expect(normalizeRoute(pathname)).toBe(pathname);
      }),
    );
  });

  it('replaces an id in any position by :id', () => {
    fc.assert(
      fc.property(fc.array(word, { maxLength: 8 }), fc.nat(), id, (words, at, value) => {
        const position = at % (words.length + 1);
        const segments = [...words];
        segments.splice(position, 0, value);
        const expected = [...words];
        expected.splice(position, 0, ':id');
        expect(normalizeRoute(`/${segments.join('/')}`)).toBe(`/${expected.join('/')}`);
      }),
    );
  });

  it('returns the matching pattern', () => {
    const part = fc.oneof(
      word,
      word.map((name) => `:${name}`),
    );
    fc.assert(
      fc.property(
        fc.array(fc.tuple(part, segment), { minLength: 1, maxLength: 6 }),
        fc.array(fc.array(part, { minLength: 1, maxLength: 6 }), { maxLength: 3 }),
        suffix,
        (pairs, others, rest) => {
          const pattern = `/${pairs.map(([name]) => name).join('/')}`;
          const pathname = `/${pairs.map(([name, value]) => (name.startsWith(':') ? value : name)).join('/')}`;
          const route = normalizeRoute(`${pathname}${rest}`, [pattern]);
          expect(route).toBe(pattern);
          // A pattern wins over the id rule; an earlier matching pattern wins over it.
          const all = [...others.map((parts) => `/${parts.join('/')}`), pattern];
          const first = all.find((candidate) => normalizeRoute(pathname, [candidate]) === candidate);
          expect(normalizeRoute(pathname, all)).toBe(first);
          // Normalizing the result again changes nothing (with the same patterns).
          expect(normalizeRoute(first as string, all)).toBe(first);
        },
      ),
    );
  });
});
