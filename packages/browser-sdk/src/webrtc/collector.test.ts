import { classifyMediaError as protocolClassify } from '@svc/protocol';
import { describe, expect, it } from 'vitest';
import { createId as coreCreateId } from '../ids.ts';
import { classifyMediaError, createId } from './collector.ts';

describe('classifyMediaError', () => {
  it("is @svc/protocol's table, copied because the SDK loads no zod", () => {
    const names = [
      'NotAllowedError',
      'NotReadableError',
      'NotFoundError',
      'OverconstrainedError',
      'AbortError',
      'SecurityError',
      'TypeError',
      'QuotaExceededError',
      'notallowederror',
      'constructor',
      'toString',
      '__proto__',
      '',
    ];
    for (const name of names) expect(classifyMediaError(name), name).toBe(protocolClassify(name));
  });
});

describe('createId', () => {
  it('makes ids as src/ids.ts does: the same time part, then 16 random Crockford characters', () => {
    for (const now of [0, 1, 1_763_700_000_000, 2 ** 48 - 1, 1_763_700_000_000.7, -5]) {
      const id = createId('pc', now);
      const core = coreCreateId('pc', now);
      expect(id).toMatch(/^pc_[0-9A-HJKMNP-TV-Z]{26}$/);
      expect(id.slice(0, 13)).toBe(core.slice(0, 13));
    }
    expect(createId('ses')).toMatch(/^ses_[0-9A-HJKMNP-TV-Z]{26}$/);
    expect(createId('pc')).not.toBe(createId('pc'));
  });
});
