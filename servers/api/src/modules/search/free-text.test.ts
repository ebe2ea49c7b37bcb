import { describe, expect, it } from 'vitest';
import { parseFreeText, snippetOf } from './free-text.ts';

describe('parseFreeText', () => {
  it('is nothing for no text', () => {
    expect(parseFreeText(undefined)).toBeUndefined();
    expect(parseFreeText('')).toBeUndefined();
    expect(parseFreeText('  \t\n ')).toBeUndefined();
  });

  it('keeps words, phrases, negation and or for websearch_to_tsquery; punctuation becomes spaces', () => {
    expect(parseFreeText('"payment declined" -test checkout/83')).toEqual({
      raw: '"payment declined" -test checkout/83',
      fullText: {
        query: '"payment declined" -test checkout 83',
        phrase: 'payment declined checkout 83',
        required: ['payment', 'declined', 'checkout', '83'],
      },
      terms: ['payment', 'declined', 'checkout', '83', '"payment declined" -test checkout/83'],
    });
    expect(parseFreeText('payment_failed')?.fullText).toEqual({
      query: 'payment failed',
      prefix: { rest: 'payment', last: "'failed':*" },
      phrase: 'payment failed',
      required: ['payment', 'failed'],
    });
    expect(parseFreeText('ada@example.com')?.fullText?.query).toBe('ada example com');
    // A hyphen inside a word separates; at the start of one it negates.
    expect(parseFreeText('foo-bar')?.fullText?.query).toBe('foo bar');
    expect(parseFreeText('timeout or failure')?.fullText).toEqual({
      query: 'timeout or failure',
      prefix: { rest: 'timeout or', last: "'failure':*" },
      phrase: 'timeout failure',
      // With `or`, no word is required.
      required: [],
    });
  });

  it('matches the last word as a prefix when it is plain and three characters or more', () => {
    expect(parseFreeText('Decli')?.fullText?.prefix).toEqual({ rest: '', last: "'decli':*" });
    expect(parseFreeText('checkout de')?.fullText?.prefix).toBeUndefined();
    expect(parseFreeText('checkout -declined')?.fullText?.prefix).toBeUndefined();
    expect(parseFreeText('"payment declined"')?.fullText?.prefix).toBeUndefined();
    expect(parseFreeText('"payment declined')?.fullText?.prefix).toBeUndefined();
    expect(parseFreeText('checkout or')?.fullText?.prefix).toBeUndefined();
    expect(parseFreeText('Straße')?.fullText?.prefix).toEqual({ rest: '', last: "'straße':*" });
  });

  it('has no full text without a positive word: punctuation, negation only', () => {
    for (const q of ['!!! ...', '-checkout', '-"payment declined"', 'or', '"', '-', '%_\\']) {
      const parsed = parseFreeText(q);
      expect(parsed?.fullText, q).toBeUndefined();
      expect(parsed?.raw).toBe(q.trim());
    }
  });

  it('reads words of any script', () => {
    expect(parseFreeText('日本語 café')?.fullText).toMatchObject({
      query: '日本語 café',
      phrase: '日本語 café',
    });
  });
});

describe('snippetOf', () => {
  it('is the text, whitespace collapsed, when it is short', () => {
    expect(snippetOf('TypeError:\n  Checkout   crashed', ['checkout'])).toBe('TypeError: Checkout crashed');
  });

  it('is undefined when no term is in the text', () => {
    expect(snippetOf('nothing here', ['checkout'])).toBeUndefined();
  });

  it('cuts a long text around the first term found, at most 160 characters and the ellipses', () => {
    const text = `${'a'.repeat(300)} the checkout failed ${'b'.repeat(300)}`;
    const snippet = snippetOf(text, ['failed', 'checkout']) as string;
    expect(snippet.startsWith('…')).toBe(true);
    expect(snippet.endsWith('…')).toBe(true);
    expect(snippet).toContain('the checkout failed');
    expect(snippet.length).toBeLessThanOrEqual(162);
    expect(snippetOf(`checkout ${'c'.repeat(300)}`, ['checkout'])).toMatch(/^checkout c+…$/);
    expect(snippetOf(`${'c'.repeat(300)} checkout`, ['checkout'])).toMatch(/^…c+ checkout$/);
  });
});
