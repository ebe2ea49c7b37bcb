import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { Scope } from '../../platform/http/authentication.ts';
import { ApiError } from '../../platform/http/errors.ts';
import { decodeSearchCursor, encodeSearchCursor, queryDigest } from './cursor.ts';
import { searchQuerySchema } from './index.ts';
import { resolveTypes } from './search.ts';

// The parts of a search that need no database: which types a query searches, the cursor, and the
// query's schema as a model's tool sees it.

const ALL: ReadonlySet<Scope> = new Set(['sessions:read', 'calls:read', 'issues:read']);

function refusal(run: () => unknown): { status: number; message: string } {
  try {
    run();
  } catch (error) {
    if (ApiError.isInstance(error)) return { status: error.status, message: error.message };
    throw error;
  }
  throw new Error('expected a refusal');
}

describe('resolveTypes', () => {
  it('searches every type the caller may read by default', () => {
    expect(resolveTypes({}, ALL)).toEqual(new Set(['session', 'call', 'issue']));
    expect(resolveTypes({}, new Set<Scope>(['calls:read', 'settings:read']))).toEqual(new Set(['call']));
  });

  it('narrows the default to the types every filter applies to', () => {
    expect(resolveTypes({ filters: { relayed: true } }, ALL)).toEqual(new Set(['call']));
    expect(resolveTypes({ filters: { browser: 'Chrome' } }, ALL)).toEqual(new Set(['session', 'call']));
    expect(resolveTypes({ filters: { browser: 'Chrome', hasErrors: true } }, ALL)).toEqual(
      new Set(['session']),
    );
    expect(resolveTypes({ filters: { severity: 'high' } }, ALL)).toEqual(
      new Set(['session', 'call', 'issue']),
    );
    expect(resolveTypes({ filters: { severity: 'high', status: 'open' } }, ALL)).toEqual(new Set(['issue']));
    expect(
      resolveTypes({ filters: { browser: 'Chrome' } }, new Set<Scope>(['sessions:read', 'issues:read'])),
    ).toEqual(new Set(['session']));
  });

  it('refuses a type asked for without its scope (403), or that a filter does not apply to (400)', () => {
    expect(refusal(() => resolveTypes({ types: ['issue'] }, new Set<Scope>(['sessions:read'])))).toEqual({
      status: 403,
      message: 'Searching issues needs the issues:read scope, which this caller lacks',
    });
    expect(
      refusal(() => resolveTypes({ types: ['issue', 'call'], filters: { hasErrors: false } }, ALL)),
    ).toEqual({
      status: 400,
      message:
        'The filter `hasErrors` applies to sessions only: remove issues and calls from `types`, or the filter',
    });
    expect(refusal(() => resolveTypes({ filters: { hasErrors: true, relayed: true } }, ALL))).toEqual({
      status: 400,
      message: 'No result type takes all of these filters: `hasErrors` (sessions), `relayed` (calls)',
    });
    expect(
      refusal(() => resolveTypes({ filters: { status: 'open' } }, new Set<Scope>(['calls:read']))),
    ).toEqual({
      status: 403,
      message:
        'Searching issues needs the issues:read scope, which this caller lacks (the filters given apply to issues only)',
    });
  });

  it('takes a type asked for twice once', () => {
    expect(resolveTypes({ types: ['call', 'call'] }, ALL)).toEqual(new Set(['call']));
  });
});

describe('search cursors', () => {
  const digest = queryDigest({ q: 'checkout', filters: { browser: 'Chrome', device: 'mobile' } });

  it('round-trips, and ignores limit, cursor and key order in the digest', () => {
    const at = new Date('2026-12-01T10:00:00.123Z');
    expect(decodeSearchCursor(encodeSearchCursor({ offset: 40, at, digest }), digest)).toEqual({
      offset: 40,
      at,
      digest,
    });
    expect(
      queryDigest({ filters: { device: 'mobile', browser: 'Chrome' }, q: 'checkout', limit: 5, cursor: 'x' }),
    ).toBe(digest);
    expect(queryDigest({ q: 'checkout', filters: { browser: 'Chrome' } })).not.toBe(digest);
  });

  it('refuses what it did not make, an offset past the last result, and another query', () => {
    const make = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
    for (const cursor of [
      '',
      '!!',
      'x'.repeat(300),
      make({}),
      make([20, 1]),
      make([0, 1, digest]),
      make([-20, 1, digest]),
      make([2.5, 1, digest]),
      make([200, 1, digest]),
      make([20, -1, digest]),
      make([20, 1, 7]),
    ])
      expect(refusal(() => decodeSearchCursor(cursor, digest)).status, cursor).toBe(400);
    expect(refusal(() => decodeSearchCursor(make([20, 1, 'other']), digest))).toEqual({
      status: 400,
      message: 'The cursor belongs to another query: send it with the query of the page it came from',
    });
  });
});

describe('searchQuerySchema', () => {
  it("is a model's tool schema: JSON Schema with every field described, the same for input and output", () => {
    const input = z.toJSONSchema(searchQuerySchema, { io: 'input' });
    expect(z.toJSONSchema(searchQuerySchema, { io: 'output' })).toEqual(input);
    const properties = input.properties as Record<
      string,
      { description?: string; properties?: Record<string, { description?: string }> }
    >;
    expect(Object.keys(properties).sort()).toEqual([
      'cursor',
      'filters',
      'from',
      'limit',
      'q',
      'to',
      'types',
    ]);
    for (const [name, property] of Object.entries(properties))
      expect(property.description, name).toEqual(expect.any(String));
    for (const [name, property] of Object.entries(properties.filters?.properties ?? {}))
      expect(property.description, name).toEqual(expect.any(String));
    expect(input.additionalProperties).toBe(false);
  });
});
