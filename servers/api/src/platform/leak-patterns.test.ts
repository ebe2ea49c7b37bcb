import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isSecretName, LEAK_KINDS, leakKindsOf, passesLuhn } from './leak-patterns.ts';

describe('leak patterns', () => {
  it.each([
    ['https://shop.test/welcome?email=ada.lovelace@example.com', ['email']],
    ['Payment failed for 4111 1111 1111 1111', ['card_number']],
    ['Payment failed for 4111-1111-1111-1111 and 4111111111111111', ['card_number']],
    ['order 4111 1111 1111 1112 (fails Luhn)', []],
    ['Authorization: Bearer abc.DEF-123_xyz', ['bearer_token']],
    ['t=eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NSJ9.c2lnbmF0dXJl', ['bearer_token']],
    ['https://api.stripe.test/v1/keys/sk_live_51HqLyjWDarjtT1zdp7dc', ['api_key']],
    ['xoxb-1234567890-abcdefghij and AKIAIOSFODNN7EXAMPLE', ['api_key']],
    ['ghp_16C7e42F292c6912E7710c838347Ae178B4a', ['api_key']],
    ['/reset?token=abc&page=2', ['api_key']],
    ['/maps?key=AIzaXYZ', ['api_key']],
    ['/download?sig=f00&expires=1', ['api_key']],
    ['/x?apikey=1&jwt=2&access_token=3&password=hunter2&auth=4&signature=5', ['api_key']],
    ['/x?EMAIL=ada@example.com&Secret=s&4111111111111111', ['email', 'card_number', 'api_key']],
    // An OAuth callback's one-time code, content hashes and ids are not leaks.
    ['https://shop.test/callback?code=4/0AfJohXk&state=ok', []],
    ['https://cdn.test/assets/app.9f86d081884c7d659a2feaa0c55ad015.js', []],
    ['ses_01JD2S5V8Q8C4Y3K2W9T7N6M5H order 1234 at 2026-11-20T10:00:00Z', []],
    ['/products?ref=mail&page=2', []],
    ['', []],
  ])('%s', (text, kinds) => {
    expect(leakKindsOf(text)).toEqual(kinds);
  });

  it('names secret properties', () => {
    for (const name of [
      'password',
      'userPassword',
      'passwd',
      'pwd',
      'api_key',
      'apiKey',
      'Authorization',
      'client_secret',
      'refreshToken',
    ])
      expect(isSecretName(name), name).toBe(true);
    for (const name of ['plan', 'step', 'card_brand', 'keyboard', 'author'])
      expect(isSecretName(name), name).toBe(false);
  });

  it('finds any Luhn-valid card number and e-mail address whatever surrounds it, and reports kinds in order, each once', () => {
    const card = fc.array(fc.integer({ min: 0, max: 9 }), { minLength: 15, maxLength: 15 }).map((digits) => {
      for (let check = 0; check < 10; check += 1) {
        const number = `${digits.join('')}${check}`;
        if (passesLuhn(number)) return number;
      }
      throw new Error('no check digit');
    });
    const email = fc.tuple(
      fc.stringMatching(/^[a-z][a-z0-9._+-]{0,15}$/),
      fc.stringMatching(/^[a-z][a-z0-9-]{0,10}\.(com|io|co\.uk)$/),
    );
    fc.assert(
      fc.property(fc.string(), card, email, fc.string(), (before, number, [user, host], after) => {
        const kinds = leakKindsOf(`${before} ${number} ${user}@${host} ${after}`);
        expect(kinds).toContain('card_number');
        expect(kinds).toContain('email');
        expect(new Set(kinds).size).toBe(kinds.length);
        expect([...kinds].sort((a, b) => LEAK_KINDS.indexOf(a) - LEAK_KINDS.indexOf(b))).toEqual(kinds);
      }),
    );
  });

  it('is stable: the same text gives the same kinds however often it is asked (no pattern state leaks between calls)', () => {
    fc.assert(
      fc.property(fc.string(), (text) => {
        const sample = `${text} /reset?token=abc sk_live_51HqLyjWDarjtT1zdp7dc`;
        expect(leakKindsOf(sample)).toEqual(leakKindsOf(sample));
      }),
    );
  });
});
