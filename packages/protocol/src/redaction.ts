/**
 * SDP and PII redaction for call data (PROTOCOL.md §3 privacy), shared by the browser SDK (its
 * `captureSdp` chunk, before anything leaves the device) and the server (its re-check of what
 * any client sends), so both redact alike and what the SDK sends passes the server unchanged.
 * Pure and without zod: `@svc/protocol/redaction` is safe to bundle into a page.
 *
 * @packageDocumentation
 */

/** What a redacted value, or the redacted part of a string, becomes. */
export const REDACTED = '[redacted]';

/**
 * Lines dropped whole: ICE candidates (addresses and ports; `a=remote-candidates` too), the
 * connection address (`c=`) and the ICE credentials. `a=end-of-candidates` carries nothing and
 * stays.
 */
const DROPPED_LINE = /^(?:a=candidate|a=remote-candidates|c=|a=ice-ufrag|a=ice-pwd)/i;

const EMAIL = /[\w.%+-]+@[a-z\d-]+(?:\.[a-z\d-]+)*\.[a-z]{2,}/gi;
const IPV4 = /(?<![\w.])(?:(?:25[0-5]|2[0-4]\d|1?\d?\d)\.){3}(?:25[0-5]|2[0-4]\d|1?\d?\d)(?![\w.])/g;
/** Words made of hex digits, colons and dots with two colons or more; {@link isIpv6} decides. */
const IPV6_CANDIDATE = /(?<![\w:.])[\da-f.]*:[\da-f.]*:[\da-f:.]*(?![\w:.])/gi;
/** mDNS host names, which browsers put in host candidates in place of the local address. */
const MDNS_NAME = /(?<![\w.-])[\w-]+\.local(?![\w.-])/gi;
/**
 * Card-number shapes: 13 to 19 digits in a row, or groups of four split by one kind of space or
 * dash (4-4-4-1..7, Amex 4-6-4..5). Lists of small numbers (an `m=` line's payload types) are not
 * a shape, so they are never read as one.
 */
const CARD =
  /(?<![\w-])(?:\d{13,19}|\d{4}([ -])\d{4}\1\d{4}\1\d{1,4}(?:\1\d{1,3})?|\d{4}([ -])\d{6}\2\d{4,5})(?![\w-])/g;
/** `o=<username> <sess-id> <sess-version> <rest>`: the two numbers are SDP's own, never scrubbed. */
const ORIGIN = /^(o=\S* )(\d+ \d+)(.*)$/;
/**
 * The port of `m=` and `a=rtcp:` lines: the default candidate's (with the `c=` address it
 * completes). It becomes 9, the port SDP uses when there is no candidate yet (RFC 8839).
 */
const CANDIDATE_PORT = /^(m=\S+ |a=rtcp:)\d+/i;

/** Whether a word is an IPv6 address, as a URL host would accept it (a DTLS fingerprint is not). */
function isIpv6(word: string): boolean {
  try {
    new URL(`http://[${word}]/`);
    return true;
  } catch {
    return false;
  }
}

/** The Luhn checksum of a run of digits holds (what card numbers satisfy). */
function isLuhnValid(digits: string): boolean {
  let sum = 0;
  for (let index = 0; index < digits.length; index += 1) {
    let digit = Number(digits[digits.length - 1 - index]);
    if (index % 2 === 1) {
      digit *= 2;
      if (digit > 9) digit -= 9;
    }
    sum += digit;
  }
  return sum % 10 === 0;
}

/**
 * Replaces IPv4 and IPv6 addresses and mDNS host names (`….local`) in `text` with
 * {@link REDACTED}.
 *
 * @example
 * ```ts
 * scrubAddresses('host 192.0.2.7 or 1f0e-ab.local'); // 'host [redacted] or [redacted]'
 * ```
 */
export function scrubAddresses(text: string): string {
  return text
    .replace(IPV4, REDACTED)
    .replace(IPV6_CANDIDATE, (word) => (isIpv6(word) ? REDACTED : word))
    .replace(MDNS_NAME, REDACTED);
}

/**
 * Replaces e-mail addresses, IP addresses, mDNS host names and Luhn-valid card numbers (13 to 19
 * digits) in `text` with {@link REDACTED}.
 *
 * @example
 * ```ts
 * scrubPii('IN IP4 192.0.2.7, ann@example.com'); // 'IN IP4 [redacted], [redacted]'
 * ```
 */
export function scrubPii(text: string): string {
  return scrubAddresses(text.replace(EMAIL, REDACTED)).replace(CARD, (number) =>
    isLuhnValid(number.replace(/\D/g, '')) ? REDACTED : number,
  );
}

/**
 * A session description fit to store: every `a=candidate`, `a=remote-candidates`, `c=`,
 * `a=ice-ufrag` and `a=ice-pwd` line dropped, the default candidate's port on `m=` and `a=rtcp:`
 * lines set to 9, the rest through {@link scrubPii} (the `o=` line keeps its session id and
 * version). Line endings become CRLF, as SDP has them. Idempotent; a description with nothing to
 * redact comes back as the same string.
 *
 * @example
 * ```ts
 * redactSdp('v=0\r\no=- 4611731400430051336 2 IN IP4 127.0.0.1\r\nc=IN IP4 192.0.2.7\r\n');
 * // 'v=0\r\no=- 4611731400430051336 2 IN IP4 [redacted]\r\n'
 * ```
 */
export function redactSdp(sdp: string): string {
  let changed = false;
  const kept: string[] = [];
  for (const line of sdp.split(/\r?\n/)) {
    if (DROPPED_LINE.test(line)) {
      changed = true;
      continue;
    }
    const ported = line.replace(CANDIDATE_PORT, '$19');
    const origin = ORIGIN.exec(ported);
    const scrubbed =
      origin === null
        ? scrubPii(ported)
        : `${scrubPii(origin[1] as string)}${origin[2]}${scrubPii(origin[3] as string)}`;
    if (scrubbed !== line) changed = true;
    kept.push(scrubbed);
  }
  // Bare line feeds become CRLF too.
  return changed || /(?<!\r)\n/.test(sdp) ? kept.join('\r\n') : sdp;
}
