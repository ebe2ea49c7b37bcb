import { hash } from '@node-rs/argon2';
import { describe, expect, it } from 'vitest';
import { checkPassword, hashPassword, needsRehash, PASSWORD_HASHING, verifyPassword } from './passwords.ts';

describe('checkPassword', () => {
  it('refuses fewer than 8 characters, counted as characters, not bytes', () => {
    expect(checkPassword('Tr0ub4d')).toBe('The password must have at least 8 characters');
    expect(checkPassword('')).toBe('The password must have at least 8 characters');
    // 7 characters of 4 UTF-8 bytes each: still too short.
    expect(checkPassword('🐴🔋📎🐴🔋📎🐴')).toBe('The password must have at least 8 characters');
    expect(checkPassword('🐴🔋📎🐴🔋📎🐴🔋')).toBeUndefined();
    expect(checkPassword('x'.repeat(257))).toBe('The password must have at most 256 characters');
  });

  it('refuses the most common passwords, whatever their case', () => {
    for (const common of ['password', 'PASSWORD', '12345678', 'baseball', 'iloveyou', 'trustno1', 'Football'])
      expect(checkPassword(common), common).toBe(
        'This password is one of the most common ones: choose another',
      );
  });

  it('accepts a long or uncommon password, with no composition rules', () => {
    expect(checkPassword('correct horse battery staple')).toBeUndefined();
    expect(checkPassword('lowercaseonly')).toBeUndefined();
  });
});

describe('password hashes', () => {
  it('are argon2id with the OWASP parameters, and verify only the right password', async () => {
    const stored = await hashPassword('correct horse battery staple');
    expect(stored).toMatch(/^\$argon2id\$v=19\$m=19456,t=2,p=1\$/);
    expect(await verifyPassword(stored, 'correct horse battery staple')).toBe(true);
    expect(await verifyPassword(stored, 'Correct horse battery staple')).toBe(false);
    expect(needsRehash(stored)).toBe(false);
  });

  it('answers false for no hash (an unknown user) after the same work as a real check', async () => {
    const stored = await hashPassword('correct horse battery staple');
    const time = async (passwordHash: string | undefined) => {
      const start = performance.now();
      expect(await verifyPassword(passwordHash, 'wrong password')).toBe(false);
      return performance.now() - start;
    };
    await time(undefined); // the dummy hash is ready
    const known: number[] = [];
    const unknown: number[] = [];
    for (let round = 0; round < 5; round += 1) {
      known.push(await time(stored));
      unknown.push(await time(undefined));
    }
    const median = (values: number[]) => values.sort((a, b) => a - b)[2] as number;
    // The same argon2id work: within a factor of two of each other (a skipped check is ~1000x faster).
    expect(median(unknown)).toBeGreaterThan(median(known) / 2);
    expect(median(unknown)).toBeLessThan(median(known) * 2);
  });

  it('needs a rehash when the parameters changed, and for what is not an argon2 hash', async () => {
    const weaker = await hash('correct horse battery staple', {
      ...PASSWORD_HASHING,
      memoryCost: 4096,
      timeCost: 1,
    });
    expect(needsRehash(weaker)).toBe(true);
    expect(await verifyPassword(weaker, 'correct horse battery staple')).toBe(true);
    expect(needsRehash('not a hash')).toBe(true);
    expect(await verifyPassword('not a hash', 'anything')).toBe(false);
  });
});
