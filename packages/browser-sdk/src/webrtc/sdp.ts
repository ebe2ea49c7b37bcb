/**
 * SDP redaction for the collector's `captureSdp` (PROTOCOL.md §3 privacy): the lines that carry
 * network addresses or ICE credentials go, and the rest passes a small PII scrubber. The
 * collector imports this module on demand, only when SDP capture is on, so it is its own chunk
 * and costs the collector nothing otherwise.
 *
 * @packageDocumentation
 */

/** What a redacted value becomes. */
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
 * Replaces e-mail addresses, IPv4 and IPv6 addresses and Luhn-valid card numbers (13 to 19
 * digits) in `text` with {@link REDACTED}.
 *
 * @example
 * ```ts
 * scrubPii('IN IP4 192.0.2.7, ann@example.com'); // 'IN IP4 [redacted], [redacted]'
 * ```
 */
export function scrubPii(text: string): string {
  return text
    .replace(EMAIL, REDACTED)
    .replace(IPV4, REDACTED)
    .replace(IPV6_CANDIDATE, (word) => (isIpv6(word) ? REDACTED : word))
    .replace(CARD, (number) => (isLuhnValid(number.replace(/\D/g, '')) ? REDACTED : number));
}

/**
 * A session description fit to leave the device: every `a=candidate`, `a=remote-candidates`,
 * `c=`, `a=ice-ufrag` and `a=ice-pwd` line dropped, the default candidate's port on `m=` and
 * `a=rtcp:` lines set to 9, the rest through {@link scrubPii} (the `o=` line keeps its session id
 * and version). Line endings become CRLF, as SDP has them.
 *
 * @example
 * ```ts
 * redactSdp('v=0\r\no=- 4611731400430051336 2 IN IP4 127.0.0.1\r\nc=IN IP4 192.0.2.7\r\n');
 * // 'v=0\r\no=- 4611731400430051336 2 IN IP4 [redacted]\r\n'
 * ```
 */
export function redactSdp(sdp: string): string {
  return sdp
    .split(/\r?\n/)
    .filter((line) => !DROPPED_LINE.test(line))
    .map((line) => line.replace(CANDIDATE_PORT, '$19'))
    .map((line) => {
      const origin = ORIGIN.exec(line);
      return origin === null
        ? scrubPii(line)
        : `${scrubPii(origin[1] as string)}${origin[2]}${scrubPii(origin[3] as string)}`;
    })
    .join('\r\n');
}

/** The fields of an `sdp` call event. */
export interface SdpEventFields {
  side: 'local' | 'remote';
  sdpType: RTCSdpType;
  sdp: string;
}

/**
 * The `sdp` event of a description `name` just applied: what the connection now holds on that
 * side (an implicit `setLocalDescription()` creates it), redacted; a rollback as given, with an
 * empty `sdp`.
 *
 * @example
 * ```ts
 * await peerConnection.setLocalDescription(offer);
 * emit(describeApplied(peerConnection, 'setLocalDescription', offer));
 * ```
 */
export function describeApplied(
  pc: RTCPeerConnection,
  name: 'setLocalDescription' | 'setRemoteDescription',
  given: unknown,
): SdpEventFields {
  const local = name === 'setLocalDescription';
  const requested = given as RTCSessionDescriptionInit | undefined;
  const { type, sdp = '' } =
    requested?.type === 'rollback'
      ? requested
      : ((local ? pc.localDescription : pc.remoteDescription) ?? { type: 'rollback' as const });
  return { side: local ? 'local' : 'remote', sdpType: type, sdp: redactSdp(sdp) };
}
