import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { passesLuhn, scrubText, scrubValue } from './scrub.ts';

describe('scrubbing what goes to a model', () => {
  it.each([
    ['Error: no account for ada.lovelace+test@example.co.uk', 'Error: no account for [email]'],
    ['card 4242 4242 4242 4242 and 4000-0566-5566-5556', 'card [card] and [card]'],
    ['order 1234 5678 9012 3456 is not a card (Luhn)', 'order 1234 5678 9012 3456 is not a card (Luhn)'],
    ['Authorization: Bearer abc.DEF-123_xyz', 'Authorization: Bearer [token]'],
    ['jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NSJ9.c2lnbmF0dXJl here', 'jwt [token] here'],
    ['GET https://shop.test/cb?code=4/0AfJohXk&state=ok', 'GET https://shop.test/cb?code=[token]&state=ok'],
    ['/reset?token=abc&page=2&api_key=XYZ', '/reset?token=[token]&page=2&api_key=[token]'],
    [
      'keys sk_live_51HqLyjWDarjtT1zdp7dc and ghp_16C7e42F292c6912E7710c838347Ae178B4a',
      'keys [token] and [token]',
    ],
    ['our token svc_0123456789abcdef0123 leaked', 'our token [token] leaked'],
    ['hash 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08', 'hash [token]'],
    ['from 192.168.1.20 to 10.0.0.1', 'from [ip] to [ip]'],
  ])('%s', (input, output) => {
    expect(scrubText(input).text).toBe(output);
  });

  it('leaves transcripts their evidence ids, routes, times and numbers', () => {
    const line =
      '00:08 [1.12] Error TypeError: cart has no items (onerror) [finding:pc_01JD2S5V8Q8C4Y3K2W9T7N6M5H:webrtc_relay_fallback] call:call_01JD2S5V8Q8C4Y3K2W9T7N6M5H ses_01JD2S5V8Q8C4Y3K2W9T7N6M5H 2026-11-20T10:00:00.000Z quality 72/100 /checkout/8341';
    expect(scrubText(line)).toEqual({ text: line, counts: { email: 0, card: 0, token: 0, ip: 0 } });
  });

  it('counts what it replaced, and scrubs every string of a value, keys included', () => {
    expect(scrubText('a@b.io c@d.io').counts).toEqual({ email: 2, card: 0, token: 0, ip: 0 });
    expect(
      scrubValue({ 'ada@example.com': ['4242424242424242', 3, true, null], nested: { url: '/x?secret=1' } }),
    ).toEqual({
      '[email]': ['[card]', 3, true, null],
      nested: { url: '/x?secret=[token]' },
    });
  });

  it('never lets an e-mail address or a Luhn-valid card number through, whatever surrounds it', () => {
    const local = fc.stringMatching(/^[a-z][a-z0-9._+-]{0,15}$/);
    const domain = fc.stringMatching(/^[a-z][a-z0-9-]{0,10}\.(com|io|co\.uk|example)$/);
    const card = fc.array(fc.integer({ min: 0, max: 9 }), { minLength: 15, maxLength: 15 }).map((digits) => {
      // Append the Luhn check digit of a 16-digit number.
      for (let check = 0; check < 10; check += 1) {
        const number = `${digits.join('')}${check}`;
        if (passesLuhn(number)) return number;
      }
      throw new Error('no check digit');
    });
    fc.assert(
      fc.property(fc.string(), local, domain, card, fc.string(), (before, user, host, number, after) => {
        const email = `${user}@${host}`;
        const { text } = scrubText(`${before} ${email} ${number} ${after}`);
        expect(text).not.toContain(email);
        expect(text.replace(/\D/g, '')).not.toContain(number);
      }),
    );
  });
});
