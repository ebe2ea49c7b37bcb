import { describe, expect, it } from 'vitest';
import { higherSeverity, SEVERITY_ORDER, severitySchema } from './index.ts';

describe('higherSeverity', () => {
  it('orders info < low < medium < high < critical', () => {
    expect(higherSeverity('low', 'medium')).toBe('medium');
    expect(higherSeverity('critical', 'info')).toBe('critical');
    expect(higherSeverity(undefined, 'info')).toBe('info');
    expect(higherSeverity(undefined, undefined)).toBeUndefined();
  });
});

describe('SEVERITY_ORDER', () => {
  it('holds every severity once, lowest first', () => {
    expect([...SEVERITY_ORDER].sort()).toEqual([...severitySchema.options].sort());
    expect(SEVERITY_ORDER).toEqual([...severitySchema.options].reverse());
  });
});
