// What an app may put in the clear that masking should have hidden: e-mail addresses, card
// numbers, bearer credentials, API keys and secrets. One set of patterns for the two places that
// look for them: the AI module's scrubbing (modules/ai/scrub.ts replaces them before anything is
// sent to a model) and the leak radar (modules/insights/leak-radar.ts reports where they are in
// newly stored events, never what they are). Pure; below every module.

/** What a leak is. */
export const LEAK_KINDS = ['email', 'card_number', 'bearer_token', 'api_key', 'secret'] as const;
export type LeakKind = (typeof LEAK_KINDS)[number];

export const EMAIL_PATTERN = /[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}/g;
/** A run of digit groups separated by one space or dash, where card numbers are looked for. */
export const DIGIT_RUN_PATTERN = /\d+(?:[ -]\d+)*/g;
/** An HTTP credential: `Bearer …`, `Basic …`, `Token …` (the scheme is the first group). */
export const BEARER_PATTERN = /\b(Bearer|Basic|Token)\s+[A-Za-z0-9._~+/=-]{8,}/gi;
/** A JWT: three base64url parts, the first one a JSON object (`eyJ`). */
export const JWT_PATTERN = /\beyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]*/g;
/** Secrets with a known shape: Stripe, GitHub, Slack, AWS, Google, OpenAI, this service's own. */
export const KNOWN_SECRET_PATTERN =
  /\b(?:(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{8,}|gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,}|xox[abprs]-[A-Za-z0-9-]{10,}|AKIA[0-9A-Z]{16}|AIza[0-9A-Za-z_-]{35}|sk-[A-Za-z0-9_-]{20,}|(?:svc|whsec|shr)_[a-z0-9]{16,})\b/g;
/**
 * A query or form parameter whose name says it holds a secret: the separator, the name and the
 * value are the three groups.
 */
export const SECRET_PARAMETER_PATTERN =
  /([?&;#]|\b)((?:access_|id_|refresh_|auth_|api_?|session_?|csrf_?|x-)?(?:token|key|secret|password|passwd|pwd|auth|authorization|signature|sig|code|sid|session|otp|apikey|jwt))=([^&#\s"'<>]+)/gi;
/** A long run of letters and digits mixing both: a key, a hash, a session id. */
export const LONG_SECRET_PATTERN = /\b(?=[A-Za-z0-9_-]*\d)(?=[A-Za-z0-9_-]*[A-Za-z])[A-Za-z0-9_-]{40,}\b/g;
export const HEX_SECRET_PATTERN = /\b[0-9a-f]{32,}\b/gi;
export const IPV4_PATTERN = /\b(?:(?:25[0-5]|2[0-4]\d|1?\d?\d)\.){3}(?:25[0-5]|2[0-4]\d|1?\d?\d)\b/g;

/**
 * A property or field name that says its value is a secret (`password`, `userPassword`,
 * `api_key`, `Authorization`, `refreshToken`, `client_secret`).
 */
const SECRET_NAME_PATTERN =
  /(?:passw(?:or)?d|\bpwd\b|secret|token|api[_-]?key|authorization|credential|private[_-]?key)/i;

/**
 * Whether a run of digits passes the Luhn check (what card numbers do).
 *
 * @example
 * ```ts
 * passesLuhn('4111111111111111'); // true
 * passesLuhn('4111111111111112'); // false
 * ```
 */
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
 * A run of digit groups (a match of {@link DIGIT_RUN_PATTERN}) with its card numbers replaced:
 * the longest span of whole groups holding 13 to 19 digits that passes Luhn, from each group on
 * (so `4242 4242 4242 4242 1` and a card written in one piece are found, and
 * `1234 5678 9012 3456`, which fails Luhn, is left).
 *
 * @example
 * ```ts
 * replaceCards('4111 1111 1111 1111', '[card]'); // { text: '[card]', count: 1 }
 * ```
 */
export function replaceCards(run: string, replacement: string): { text: string; count: number } {
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
      parts.push(replacement);
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
 * Parameter names that the leak radar does not report: an OAuth callback's one-time `code` is in
 * every sign-in's URL and is spent by the time anyone reads it.
 */
const UNREPORTED_PARAMETERS: ReadonlySet<string> = new Set(['code']);

/** Whether a global pattern matches anywhere in a text (`search` ignores and keeps `lastIndex`). */
const found = (pattern: RegExp, text: string) => text.search(pattern) >= 0;

/**
 * Which kinds of leak a text holds, in {@link LEAK_KINDS} order, each once; never what matched.
 * `email`: an e-mail address; `card_number`: 13–19 digits passing Luhn; `bearer_token`: a
 * `Bearer`/`Basic`/`Token` credential or a JWT; `api_key`: a secret of a known shape (`sk_live_`,
 * `ghp_`, `xoxb-`, `AKIA…`) or a secret-named URL parameter with a value (`?token=`, `api_key=`,
 * `sig=`, `password=`, …). Long random strings and hashes are not reported (content-hashed asset
 * URLs have them).
 *
 * @example
 * ```ts
 * leakKindsOf('https://shop.test/reset?email=ada@example.com&token=abc'); // ['email', 'api_key']
 * ```
 */
export function leakKindsOf(text: string): LeakKind[] {
  const kinds: LeakKind[] = [];
  if (found(EMAIL_PATTERN, text)) kinds.push('email');
  const runs = text.match(DIGIT_RUN_PATTERN) ?? [];
  if (runs.some((run) => run.length >= 13 && replaceCards(run, '').count > 0)) kinds.push('card_number');
  if (found(BEARER_PATTERN, text) || found(JWT_PATTERN, text)) kinds.push('bearer_token');
  if (
    found(KNOWN_SECRET_PATTERN, text) ||
    [...text.matchAll(SECRET_PARAMETER_PATTERN)].some(
      ([, , name]) => !UNREPORTED_PARAMETERS.has((name as string).toLowerCase()),
    )
  )
    kinds.push('api_key');
  return kinds;
}

/**
 * Whether a property's name says it holds a secret (`password`, `api_key`, `authorization`,
 * `refreshToken`, …): its value, when there is one, is a `secret` leak.
 *
 * @example
 * ```ts
 * isSecretName('userPassword'); // true
 * isSecretName('plan'); // false
 * ```
 */
export function isSecretName(name: string): boolean {
  return SECRET_NAME_PATTERN.test(name);
}
