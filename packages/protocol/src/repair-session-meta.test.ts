import { describe, expect, it } from 'vitest';
import { OPTIONAL_META_FIELDS, repairSessionMeta } from './repair-session-meta.ts';
import { sessionMetaSchema } from './session-meta.ts';

const meta = {
  sdk: { name: '@svc/browser-sdk', version: '0.1.0' },
  startedAt: 1763700000000,
  url: 'https://app.example.com/',
  referrer: 'https://example.com/',
  userAgent: 'Mozilla/5.0',
  browser: { name: 'Chrome', version: '142' },
  os: { name: 'Linux', version: 'x86_64' },
  device: 'desktop',
  viewport: { w: 1280, h: 720 },
  release: 'web@1',
  environment: 'production',
  user: { id: 'u_1', email: 'ada@example.com', name: 'Ada' },
  recording: { mode: 'always' },
};

describe('repairSessionMeta', () => {
  it('returns a valid meta itself, dropping nothing', () => {
    const result = repairSessionMeta(meta);
    expect(result.meta).toBe(meta);
    expect(result.dropped).toEqual([]);
  });

  it('lists exactly the optional fields of the schema', () => {
    for (const field of OPTIONAL_META_FIELDS) {
      const [first, second] = field.split('.') as [keyof typeof meta, string | undefined];
      const without =
        second === undefined
          ? Object.fromEntries(Object.entries(meta).filter(([key]) => key !== first))
          : {
              ...meta,
              [first]: Object.fromEntries(Object.entries(meta[first]).filter(([key]) => key !== second)),
            };
      expect(sessionMetaSchema.safeParse(without).success, field).toBe(true);
    }
    // Every other leaf is required.
    const required = [
      'sdk.name',
      'sdk.version',
      'startedAt',
      'url',
      'userAgent',
      'browser.name',
      'os.name',
      'device',
      'viewport.w',
      'viewport.h',
      'recording.mode',
      'user.id',
    ];
    for (const field of required) {
      const [first, second] = field.split('.') as [keyof typeof meta, string | undefined];
      const without =
        second === undefined
          ? Object.fromEntries(Object.entries(meta).filter(([key]) => key !== first))
          : {
              ...meta,
              [first]: Object.fromEntries(Object.entries(meta[first]).filter(([key]) => key !== second)),
            };
      expect(sessionMetaSchema.safeParse(without).success, field).toBe(false);
    }
  });

  it('drops every bad optional field, without touching its argument', () => {
    const sent = {
      ...meta,
      referrer: '',
      browser: { name: 'Chrome', version: null },
      os: { name: 'Linux', version: 'x'.repeat(257) },
      release: '',
      environment: false,
      user: { id: 'u_1', email: '', name: '' },
    };
    const copy = structuredClone(sent);
    const { meta: repaired, dropped } = repairSessionMeta(sent);
    expect(sent).toEqual(copy);
    expect(dropped.map(({ path, reason }) => [path, reason])).toEqual([
      ['meta.referrer', 'empty'],
      ['meta.browser.version', 'empty'],
      ['meta.os.version', 'invalid'],
      ['meta.release', 'empty'],
      ['meta.environment', 'invalid'],
      ['meta.user.email', 'empty'],
      ['meta.user.name', 'empty'],
    ]);
    expect(sessionMetaSchema.parse(repaired)).toEqual({
      ...meta,
      referrer: undefined,
      browser: { name: 'Chrome' },
      os: { name: 'Linux' },
      release: undefined,
      environment: undefined,
      user: { id: 'u_1' },
    });
  });

  it('drops a user without a valid id whole, and reads no further into it', () => {
    const { meta: repaired, dropped } = repairSessionMeta({ ...meta, user: { email: '' } });
    expect(dropped).toEqual([
      { path: 'meta.user', reason: 'invalid', message: expect.stringMatching(/^id: /) },
    ]);
    expect(repaired).not.toHaveProperty('user');
    expect(repairSessionMeta({ ...meta, user: ['u_1'] }).dropped).toMatchObject([
      { path: 'meta.user', reason: 'invalid' },
    ]);
  });

  it('leaves required fields and non-objects to the strict schema', () => {
    const broken = { ...meta, os: 'Linux', browser: { version: '' } };
    const { meta: repaired, dropped } = repairSessionMeta(broken);
    // browser.version is optional and empty: dropped; os is not an object: nothing to read into.
    expect(dropped.map(({ path }) => path)).toEqual(['meta.browser.version']);
    expect(sessionMetaSchema.safeParse(repaired).success).toBe(false);
    for (const value of [null, 'meta', 42, []])
      expect(repairSessionMeta(value)).toEqual({ meta: value, dropped: [] });
  });
});
