// What is scrubbed from anything sent to a model (servers/api/README.md, AI and privacy): what
// the SDK masked never reaches a transcript in the first place; this removes what an app may have
// put in the clear (an error message with an e-mail address, a custom event's property with a
// card number, a URL with a token). Pure, and applied last, to the exact text sent.

import {
  BEARER_PATTERN,
  DIGIT_RUN_PATTERN,
  EMAIL_PATTERN,
  HEX_SECRET_PATTERN,
  IPV4_PATTERN,
  JWT_PATTERN,
  KNOWN_SECRET_PATTERN,
  LONG_SECRET_PATTERN,
  replaceCards,
  SECRET_PARAMETER_PATTERN,
} from '../../platform/leak-patterns.ts';

export { passesLuhn } from '../../platform/leak-patterns.ts';

/** What scrubbing replaced, by kind. */
export interface ScrubCounts {
  email: number;
  card: number;
  token: number;
  ip: number;
}

/**
 * The text with e-mail addresses, card numbers (13–19 digits passing Luhn), tokens (bearer and
 * basic credentials, JWTs, secrets of known shapes, secret-named URL parameters, long random
 * strings) and IPv4 addresses replaced by `[email]`, `[card]`, `[token]`, `[ip]`; and how many.
 *
 * @example
 * ```ts
 * scrubText('mail ada@example.com, card 4242 4242 4242 4242, /cb?code=abc123').text;
 * // 'mail [email], card [card], /cb?code=[token]'
 * ```
 */
export function scrubText(text: string): { text: string; counts: ScrubCounts } {
  const counts: ScrubCounts = { email: 0, card: 0, token: 0, ip: 0 };
  let scrubbed = text.replace(EMAIL_PATTERN, () => {
    counts.email += 1;
    return '[email]';
  });
  scrubbed = scrubbed.replace(BEARER_PATTERN, (_match, scheme: string) => {
    counts.token += 1;
    return `${scheme} [token]`;
  });
  scrubbed = scrubbed.replace(JWT_PATTERN, () => {
    counts.token += 1;
    return '[token]';
  });
  scrubbed = scrubbed.replace(KNOWN_SECRET_PATTERN, () => {
    counts.token += 1;
    return '[token]';
  });
  scrubbed = scrubbed.replace(
    SECRET_PARAMETER_PATTERN,
    (match, separator: string, name: string, value: string) => {
      if (value === '[token]' || value === '[email]') return match;
      counts.token += 1;
      return `${separator}${name}=[token]`;
    },
  );
  scrubbed = scrubbed.replace(DIGIT_RUN_PATTERN, (run) => {
    const { text: cards, count } = replaceCards(run, '[card]');
    counts.card += count;
    return cards;
  });
  scrubbed = scrubbed.replace(HEX_SECRET_PATTERN, () => {
    counts.token += 1;
    return '[token]';
  });
  scrubbed = scrubbed.replace(LONG_SECRET_PATTERN, () => {
    counts.token += 1;
    return '[token]';
  });
  scrubbed = scrubbed.replace(IPV4_PATTERN, () => {
    counts.ip += 1;
    return '[ip]';
  });
  return { text: scrubbed, counts };
}

/**
 * A JSON value with every string scrubbed (keys included), for structured data sent to a model
 * (tool results, explanations).
 *
 * @example
 * ```ts
 * scrubValue({ user: 'ada@example.com', n: 3 }); // { user: '[email]', n: 3 }
 * ```
 */
export function scrubValue(value: unknown): unknown {
  if (typeof value === 'string') return scrubText(value).text;
  if (Array.isArray(value)) return value.map(scrubValue);
  if (typeof value === 'object' && value !== null) {
    return Object.fromEntries(
      Object.entries(value as Record<string, unknown>).map(([key, entry]) => [
        scrubText(key).text,
        scrubValue(entry),
      ]),
    );
  }
  return value;
}
