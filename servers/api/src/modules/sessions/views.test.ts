import { describe, expect, it } from 'vitest';
import {
  decodeEventCursor,
  decodeSessionCursor,
  encodeEventCursor,
  encodeSessionCursor,
} from '../../platform/http/cursor.ts';
import { containsPattern, severitiesAtLeast } from './session-queries.ts';
import { missingSeqRanges } from './views.ts';

describe('missingSeqRanges', () => {
  it.each([
    [[], []],
    [[0], []],
    [[0, 1, 2], []],
    [[2, 0], [{ fromSeq: 1, toSeq: 1 }]],
    [[3], [{ fromSeq: 0, toSeq: 2 }]],
    [
      [0, 2, 3, 7],
      [
        { fromSeq: 1, toSeq: 1 },
        { fromSeq: 4, toSeq: 6 },
      ],
    ],
  ])('%j → %j', (seqs, expected) => {
    expect(missingSeqRanges(seqs)).toEqual(expected);
  });
});

describe('containsPattern', () => {
  it('escapes LIKE wildcards and the escape character', () => {
    expect(containsPattern('100%_off\\x')).toBe('%100\\%\\_off\\\\x%');
  });
});

describe('severitiesAtLeast', () => {
  it('is the level and every severity above it', () => {
    expect(severitiesAtLeast('critical')).toEqual(['critical']);
    expect(severitiesAtLeast('medium')).toEqual(['critical', 'high', 'medium']);
    expect(severitiesAtLeast('info')).toEqual(['critical', 'high', 'medium', 'low', 'info']);
  });
});

describe('cursors', () => {
  it('round-trip', () => {
    const session = { startedAt: new Date(1_763_700_000_123), id: 'ses_01KAJBCH80XTQ0YDPAV81S476S' };
    expect(decodeSessionCursor(encodeSessionCursor(session))).toEqual(session);
    expect(decodeEventCursor(encodeEventCursor({ seq: 3, index: 41 }))).toEqual({ seq: 3, index: 41 });
  });

  it('refuse anything else with a 400 invalid', () => {
    const encode = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
    for (const cursor of [
      '',
      '***',
      encode([1]),
      encode([1.5, 'ses_01KAJBCH80XTQ0YDPAV81S476S']),
      encode([1, 2]),
    ]) {
      expect(() => decodeSessionCursor(cursor)).toThrow(
        expect.objectContaining({ status: 400, code: 'invalid' }),
      );
    }
    for (const cursor of [
      encode([0, -1]),
      encode(['0', 1]),
      encode({ seq: 1, index: 1 }),
      encode([2 ** 40, 0]),
    ]) {
      expect(() => decodeEventCursor(cursor)).toThrow(
        expect.objectContaining({ status: 400, code: 'invalid' }),
      );
    }
  });
});
