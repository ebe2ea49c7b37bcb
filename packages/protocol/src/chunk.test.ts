import { describe, expect, it } from 'vitest';
import { chunkSchema, formatIssuePath, MAX_REPORTED_ISSUES, parseChunk } from './chunk.ts';
import { PROTOCOL_LIMITS } from './limits.ts';

const t = 1763700000000;
const pc = 'pc_01KAJBCH80XTQ0YDPAV81S476S';
const meta = {
  sdk: { name: '@svc/browser-sdk', version: '0.1.0' },
  startedAt: t,
  url: 'https://app.example.com/',
  userAgent: 'Mozilla/5.0',
  browser: { name: 'Chrome', version: '142' },
  os: { name: 'Linux', version: 'x86_64' },
  device: 'desktop',
  viewport: { w: 1280, h: 720 },
  recording: { mode: 'always' },
};
const chunk = (events: unknown[], overrides: Record<string, unknown> = {}) => ({
  v: 1,
  sessionId: 'ses_01KAJBCH80XTQ0YDPAV81S476S',
  seq: 0,
  sentAt: t + 1000,
  meta,
  events,
  ...overrides,
});
const nav = { t, type: 'nav', url: 'https://app.example.com/' };

describe('parseChunk', () => {
  it('returns the chunk and an empty skipped list for known events', () => {
    const input = chunk([nav]);
    const result = parseChunk(input);
    expect(result).toEqual({ success: true, chunk: chunk([nav]), skipped: [], dropped: [], input });
    // Nothing dropped: the input itself, not a copy.
    expect(result.success && result.input).toBe(input);
  });

  it('skips events of unknown types and reports their original index and type', () => {
    const input = chunk([
      { t, type: 'network.request', url: 'x' },
      nav,
      { t: t + 1, type: 'future', payload: null },
    ]);
    const result = parseChunk(input);
    expect(result).toEqual({
      success: true,
      chunk: chunk([nav]),
      skipped: [
        { index: 0, type: 'network.request' },
        { index: 2, type: 'future' },
      ],
      dropped: [],
      input,
    });
  });

  it('fails the chunk for a known type with bad fields, with the path of the field', () => {
    const result = parseChunk(chunk([nav, { t, type: 'governor', level: 'panic' }]));
    expect(result.success).toBe(false);
    if (result.success) return;
    expect(result.error.issues).toEqual([
      expect.objectContaining({ code: 'invalid_value', path: ['events', 1, 'level'] }),
    ]);
    expect(result.error.message).toMatch(/^Invalid chunk: 1 issue\. First: events\[1\]\.level: /);
  });

  it('reports the nested path of a bad track metric inside a call.sample', () => {
    const sample = {
      t,
      type: 'call.sample',
      pc,
      windowMs: 5000,
      conn: { state: 'connected' },
      tracks: [{ id: 'trk_1', kind: 'audio', dir: 'in', audioLevel: 1.5 }],
    };
    const result = parseChunk(chunk([sample]));
    expect(!result.success && result.error.issues.map((issue) => issue.path)).toEqual([
      ['events', 0, 'tracks', 0, 'audioLevel'],
    ]);
  });

  it('reports a call.event of a known name with a wrong field type at that field', () => {
    const result = parseChunk(chunk([{ t, type: 'call.event', pc, name: 'pc_closed', durationMs: '5' }]));
    expect(!result.success && result.error.issues.map((issue) => issue.path)).toEqual([
      ['events', 0, 'durationMs'],
    ]);
  });

  it('explains an unknown-type event without t by the unknown-event rules', () => {
    const result = parseChunk(chunk([{ type: 'future' }]));
    expect(!result.success && result.error.issues.map((issue) => issue.path)).toEqual([['events', 0, 't']]);
  });

  it('requires meta on seq 0 only', () => {
    const { meta: _meta, ...withoutMeta } = chunk([nav]);
    const first = parseChunk(withoutMeta);
    expect(!first.success && first.error.issues).toEqual([
      expect.objectContaining({ code: 'custom', path: ['meta'] }),
    ]);
    expect(parseChunk({ ...withoutMeta, seq: 1 }).success).toBe(true);
  });

  it('rejects unknown top-level fields and strips unknown fields inside events and meta', () => {
    const strict = parseChunk({ ...chunk([nav]), compression: 'brotli' });
    expect(!strict.success && strict.error.issues[0]).toMatchObject({ code: 'unrecognized_keys', path: [] });
    const tolerant = parseChunk(chunk([{ ...nav, title: 'Home' }], { meta: { ...meta, locale: 'en' } }));
    expect(tolerant.success && tolerant.chunk.events[0]).toEqual(nav);
    expect(tolerant.success && tolerant.chunk.meta).toEqual(meta);
  });

  it('drops an empty or malformed optional meta field, keeps the chunk and reports the field', () => {
    const sent = chunk([nav], {
      meta: { ...meta, os: { name: 'Linux', version: '' }, release: 42, locale: 'en' },
    });
    const result = parseChunk(sent);
    if (!result.success) throw new Error(result.error.message);
    expect(result.dropped).toEqual([
      { path: 'meta.os.version', reason: 'empty', message: expect.stringMatching(/>=1 characters/) },
      { path: 'meta.release', reason: 'invalid', message: expect.stringMatching(/expected string/) },
    ]);
    expect(result.chunk.meta?.os).toEqual({ name: 'Linux' });
    expect(result.chunk.meta).not.toHaveProperty('release');
    // `input` is a copy without the dropped fields; unknown fields are kept, the argument is untouched.
    expect(result.input.meta).toEqual({ ...meta, os: { name: 'Linux' }, locale: 'en' });
    expect(sent.meta).toMatchObject({ os: { name: 'Linux', version: '' }, release: 42 });
  });

  it('keeps the strict checks of required meta fields, whatever optional fields it drops', () => {
    const result = parseChunk(
      chunk([nav], { meta: { ...meta, os: { name: '', version: '' }, referrer: null } }),
    );
    expect(!result.success && result.error.issues).toEqual([
      expect.objectContaining({ code: 'too_small', path: ['meta', 'os', 'name'] }),
    ]);
  });

  it('keeps events in the order sent, even when out of order by t', () => {
    const later = { ...nav, t: t + 5 };
    const result = parseChunk(chunk([later, nav]));
    expect(result.success && result.chunk.events).toEqual([later, nav]);
  });

  it('refuses more than maxEventsPerChunk events', () => {
    const events = Array.from({ length: PROTOCOL_LIMITS.maxEventsPerChunk + 1 }, () => nav);
    const result = parseChunk(chunk(events));
    expect(!result.success && result.error.issues).toEqual([
      expect.objectContaining({ code: 'too_big', path: ['events'] }),
    ]);
  });

  it('caps the reported issues', () => {
    const events = Array.from({ length: MAX_REPORTED_ISSUES + 50 }, () => ({ t, type: 'nav' }));
    const result = parseChunk(chunk(events));
    expect(!result.success && result.error.issues).toHaveLength(MAX_REPORTED_ISSUES);
    expect(!result.success && result.error.message).toMatch(/^Invalid chunk: 150 issues\./);
  });

  it.each([null, undefined, 42, 'chunk', [], {}])('never throws, for %j too', (input) => {
    const result = parseChunk(input);
    expect(result.success).toBe(false);
  });
});

describe('chunkSchema', () => {
  it('drops unknown-type events from its output', () => {
    expect(chunkSchema.parse(chunk([{ t, type: 'future' }, nav])).events).toEqual([nav]);
  });
});

describe('formatIssuePath', () => {
  it('formats paths like accessors', () => {
    expect(formatIssuePath(['events', 3, 'tracks', 0, 'lossPct'])).toBe('events[3].tracks[0].lossPct');
    expect(formatIssuePath([0, 'a'])).toBe('[0].a');
    expect(formatIssuePath([])).toBe('(root)');
  });
});
