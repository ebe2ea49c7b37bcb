// What is scrubbed from anything sent to a model (servers/api/README.md, AI and privacy): what
// the SDK masked never reaches a transcript in the first place; this removes what an app may have
// put in the clear (an error message with an e-mail address, a custom event's property with a
// card number, a URL with a token). Pure, and applied last, to the exact text sent.

/** What scrubbing replaced, by kind. */
export interface ScrubCounts {
  email: number;
  card: number;
  token: number;
  ip: number;
}

const EMAIL = /[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}/g;
/** A run of digit groups separated by one space or dash, where card numbers are looked for. */
const DIGIT_RUN = /\d+(?:[ -]\d+)*/g;
const BEARER = /\b(Bearer|Basic|Token)\s+[A-Za-z0-9._~+/=-]{8,}/gi;
const JWT = /\beyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]*/g;
/** Secrets with a known shape: Stripe, GitHub, Slack, AWS, Google, OpenAI, this service's own. */
const KNOWN_SECRET =
  /\b(?:(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{8,}|gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,}|xox[abprs]-[A-Za-z0-9-]{10,}|AKIA[0-9A-Z]{16}|AIza[0-9A-Za-z_-]{35}|sk-[A-Za-z0-9_-]{20,}|(?:svc|whsec|shr)_[a-z0-9]{16,})\b/g;
/** A query or form parameter whose name says it holds a secret. */
const SECRET_PARAMETER =
  /([?&;#]|\b)((?:access_|id_|refresh_|auth_|api_?|session_?|csrf_?|x-)?(?:token|key|secret|password|passwd|pwd|auth|authorization|signature|sig|code|sid|session|otp|apikey))=([^&#\s"'<>]+)/gi;
/** A long run of letters and digits mixing both: a key, a hash, a session id. */
const LONG_SECRET = /\b(?=[A-Za-z0-9_-]*\d)(?=[A-Za-z0-9_-]*[A-Za-z])[A-Za-z0-9_-]{40,}\b/g;
const HEX_SECRET = /\b[0-9a-f]{32,}\b/gi;
const IPV4 = /\b(?:(?:25[0-5]|2[0-4]\d|1?\d?\d)\.){3}(?:25[0-5]|2[0-4]\d|1?\d?\d)\b/g;

/** Whether a run of digits passes the Luhn check (what card numbers do). */
export function passesLuhn(digits: string): boolean {
  let sum = 0;
  let double = false;
  for (let index = digits.length - 1; index >= 0; index -= 1) {
    let digit = digits.charCodeAt(index) - 48;
    if (digit < 0 || digit > 9) return false;
    if (double) {
      digit *= 2;
      if (digit > 9) digit -= 9;
    }
    sum += digit;
    double = !double;
  }
  return digits.length >= 13 && sum % 10 === 0;
}

/**
 * A run of digit groups with its card numbers replaced: the longest span of whole groups holding
 * 13 to 19 digits that passes Luhn, from each group on (so `4242 4242 4242 4242 1` and a card
 * written in one piece are found, and `1234 5678 9012 3456`, which fails Luhn, is left).
 */
function scrubCards(run: string): { text: string; count: number } {
  // Digit groups at even places, their separators at odd ones.
  const groups = run.split(/([ -])/);
  const parts: string[] = [];
  let count = 0;
  let index = 0;
  while (index < groups.length) {
    if (index % 2 === 1) {
      parts.push(groups[index] as string);
      index += 1;
      continue;
    }
    let matchedEnd = -1;
    let digits = '';
    for (let end = index; end < groups.length; end += 2) {
      digits += groups[end] as string;
      if (digits.length > 19) break;
      if (digits.length >= 13 && passesLuhn(digits)) matchedEnd = end;
    }
    if (matchedEnd >= 0) {
      parts.push('[card]');
      count += 1;
      index = matchedEnd + 1;
    } else {
      parts.push(groups[index] as string);
      index += 1;
    }
  }
  return { text: parts.join(''), count };
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
  let scrubbed = text.replace(EMAIL, () => {
    counts.email += 1;
    return '[email]';
  });
  scrubbed = scrubbed.replace(BEARER, (_match, scheme: string) => {
    counts.token += 1;
    return `${scheme} [token]`;
  });
  scrubbed = scrubbed.replace(JWT, () => {
    counts.token += 1;
    return '[token]';
  });
  scrubbed = scrubbed.replace(KNOWN_SECRET, () => {
    counts.token += 1;
    return '[token]';
  });
  scrubbed = scrubbed.replace(SECRET_PARAMETER, (match, separator: string, name: string, value: string) => {
    if (value === '[token]' || value === '[email]') return match;
    counts.token += 1;
    return `${separator}${name}=[token]`;
  });
  scrubbed = scrubbed.replace(DIGIT_RUN, (run) => {
    const { text: cards, count } = scrubCards(run);
    counts.card += count;
    return cards;
  });
  scrubbed = scrubbed.replace(HEX_SECRET, () => {
    counts.token += 1;
    return '[token]';
  });
  scrubbed = scrubbed.replace(LONG_SECRET, () => {
    counts.token += 1;
    return '[token]';
  });
  scrubbed = scrubbed.replace(IPV4, () => {
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
