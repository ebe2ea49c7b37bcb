import { describe, expect, it } from 'vitest';
import { isTransientConflict, retryTransientConflicts } from './errors.ts';

const conflict = (code: string) => Object.assign(new Error(`SQLSTATE ${code}`), { code });

describe('transient conflicts', () => {
  it('recognises deadlocks and serialization failures, nothing else', () => {
    expect(isTransientConflict(conflict('40P01'))).toBe(true);
    expect(isTransientConflict(conflict('40001'))).toBe(true);
    expect(isTransientConflict(conflict('23505'))).toBe(false);
    expect(isTransientConflict(new Error('deadlock'))).toBe(false);
    expect(isTransientConflict(undefined)).toBe(false);
  });

  it('runs the operation again after a deadlock, up to the attempts given', async () => {
    let runs = 0;
    const result = await retryTransientConflicts(
      async () => {
        runs += 1;
        if (runs < 3) throw conflict('40P01');
        return 'indexed';
      },
      { maxPauseMs: 1 },
    );
    expect(result).toBe('indexed');
    expect(runs).toBe(3);

    let always = 0;
    await expect(
      retryTransientConflicts(
        async () => {
          always += 1;
          throw conflict('40001');
        },
        { attempts: 4, maxPauseMs: 1 },
      ),
    ).rejects.toMatchObject({ code: '40001' });
    expect(always).toBe(4);
  });

  it('throws any other error at once', async () => {
    let runs = 0;
    await expect(
      retryTransientConflicts(async () => {
        runs += 1;
        throw conflict('23505');
      }),
    ).rejects.toMatchObject({ code: '23505' });
    expect(runs).toBe(1);
  });
});
