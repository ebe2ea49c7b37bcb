import { classifyMediaError as protocolClassify } from '@svc/protocol';
import { describe, expect, it } from 'vitest';
import { classifyMediaError } from './collector.ts';

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
