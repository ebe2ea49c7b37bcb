import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { REDACTED, redactSdp, scrubAddresses, scrubPii } from './redaction.ts';

// PROTOCOL.md §3 privacy: SDP is sent and stored only with its candidate, c=, ice-ufrag and
// ice-pwd lines stripped and the rest through the PII scrubber.

/** A real offer of headless Chromium 156 with every candidate gathered (host candidates on 127.0.0.1, 192.0.2.2, ::1 and fd00::2). */
const OFFER = readFileSync(new URL('../fixtures/sdp/chromium156-offer.sdp', import.meta.url), 'utf8');

const sdp = (...lines: string[]) => `${lines.join('\r\n')}\r\n`;
const BASE = ['v=0', 'o=- 4611731400430051336 2 IN IP4 127.0.0.1', 's=-', 't=0 0'];

describe('redactSdp', () => {
  it.each([
    ['a=candidate', 'a=candidate:529746981 1 udp 2122194687 10.1.2.3 60663 typ host generation 0'],
    [
      'a=candidate (relay, with the related address)',
      'a=candidate:1 1 udp 41885439 10.9.9.9 50000 typ relay raddr 0.0.0.0 rport 0',
    ],
    ['a=remote-candidates', 'a=remote-candidates:1 10.1.2.3 60663'],
    ['c=', 'c=IN IP4 10.1.2.3'],
    ['c= (IPv6)', 'c=IN IP6 2001:db8::7'],
    ['a=ice-ufrag', 'a=ice-ufrag:Bc5S'],
    ['a=ice-pwd', 'a=ice-pwd:ZR+J9cjXwdf8YDJSo4lc+HCk'],
  ])('drops every %s line', (_kind, line) => {
    const input = sdp(...BASE, 'm=audio 9 UDP/TLS/RTP/SAVPF 111', line, 'a=mid:0', line);
    const output = redactSdp(input);
    expect(output).toBe(
      sdp(
        'v=0',
        `o=- 4611731400430051336 2 IN IP4 ${REDACTED}`,
        's=-',
        't=0 0',
        'm=audio 9 UDP/TLS/RTP/SAVPF 111',
        'a=mid:0',
      ),
    );
    expect(output).not.toContain(line.slice(line.indexOf(':') + 1));
  });

  it('keeps a=end-of-candidates, a=ice-options and the rest as they are', () => {
    const lines = [...BASE.slice(0, 1), 'a=ice-options:trickle', 'a=end-of-candidates', 'a=mid:0'];
    expect(redactSdp(sdp(...lines))).toBe(sdp(...lines));
  });

  it("sets the m= and a=rtcp: ports (the default candidate's) to 9", () => {
    expect(redactSdp(sdp('m=video 50973 UDP/TLS/RTP/SAVPF 96 97', 'a=rtcp:50974 IN IP4 10.1.2.3'))).toBe(
      sdp('m=video 9 UDP/TLS/RTP/SAVPF 96 97', `a=rtcp:9 IN IP4 ${REDACTED}`),
    );
  });

  it("keeps the o= line's session id and version (even Luhn-valid ones) and loses its address", () => {
    expect(redactSdp('o=- 4611731400430051336 2 IN IP4 127.0.0.1')).toBe(
      `o=- 4611731400430051336 2 IN IP4 ${REDACTED}`,
    );
    // 4111111111111111 passes the Luhn check: as an o= session id it is SDP's, not a card.
    expect(scrubPii('4111111111111111')).toBe(REDACTED);
    expect(redactSdp('o=ann@example.com 4111111111111111 3 IN IP6 2001:db8::1')).toBe(
      `o=${REDACTED} 4111111111111111 3 IN IP6 ${REDACTED}`,
    );
  });

  it('redacts a real Chromium offer: candidates, c=, ufrag and pwd gone, the o= and rtcp addresses and m= ports too, nothing else touched', () => {
    const input = OFFER.split('\r\n');
    const dropped = /^(a=candidate|c=|a=ice-ufrag|a=ice-pwd)/;
    expect(input.filter((line) => dropped.test(line)).length).toBeGreaterThanOrEqual(16);
    const expected = input
      .filter((line) => !dropped.test(line))
      .map((line) =>
        line
          .replace(/^(o=- \d+ \d+ IN IP4) 127\.0\.0\.1$/, `$1 ${REDACTED}`)
          .replace(/^(m=\w+) \d+ /, '$1 9 ')
          .replace(/^a=rtcp:9 IN IP4 0\.0\.0\.0$/, `a=rtcp:9 IN IP4 ${REDACTED}`),
      );
    const output = redactSdp(OFFER);
    expect(output.split('\r\n')).toEqual(expected);
    for (const secret of ['127.0.0.1', '192.0.2.2', '::1', 'fd00::2', 'typ host'])
      expect(output).not.toContain(secret);
    for (const [, credential] of OFFER.matchAll(/^a=ice-(?:ufrag|pwd):(.+)$/gm))
      expect(output).not.toContain(credential?.trim());
  });
});

describe('scrubPii', () => {
  it.each([
    ['IPv4', 'IN IP4 192.0.2.7 and 10.0.0.1', `IN IP4 ${REDACTED} and ${REDACTED}`],
    [
      'IPv6',
      'IN IP6 2001:db8::1, fe80::1ff:fe23:4567:890a, ::1',
      `IN IP6 ${REDACTED}, ${REDACTED}, ${REDACTED}`,
    ],
    ['IPv6, full', '2001:0db8:0000:0000:0000:ff00:0042:8329', REDACTED],
    ['IPv4-mapped IPv6', 'at ::ffff:192.0.2.1 now', 'at ::ffff:[redacted] now'],
    ['e-mail', 'cname:ann.lee+rtc@mail.example.co.uk', `cname:${REDACTED}`],
    ['card, contiguous', 'x=4111111111111111', `x=${REDACTED}`],
    ['card, spaced', 'pay 4111 1111 1111 1111 now', `pay ${REDACTED} now`],
    ['card, dashed', '5500-0000-0000-0004', REDACTED],
    ['card, 13 digits', '4222222222222', REDACTED],
    ['card, 19 digits', '6304000000000000000 x', `${REDACTED} x`],
    ['card, Amex 4-6-5', '3782 822463 10005', REDACTED],
  ])('replaces %s', (_kind, input, output) => {
    expect(scrubPii(input)).toBe(output);
  });

  it.each([
    ['a digit run that fails the Luhn check', '4111111111111112'],
    ['12 and 20 digits', '411111111111 41111111111111111113'],
    [
      'payload type lists',
      'm=video 9 UDP/TLS/RTP/SAVPF 96 97 102 103 104 107 108 109 114 115 116 117 39 40 45 46 98 99',
    ],
    [
      'a DTLS fingerprint',
      'a=fingerprint:sha-256 D2:9D:49:E4:FA:C0:69:87:0D:5D:42:93:E0:3E:1B:B3:3D:3C:48:66:E3:F4:F7:1A:88:9A:04:2C:44:40:8B:88',
    ],
    [
      'attributes with colons',
      'a=rtpmap:111 opus/48000/2 a=extmap:1 urn:ietf:params:rtp-hdrext:ssrc-audio-level',
    ],
    ['ssrc lines', 'a=ssrc-group:FID 646377352 486882653 a=ssrc:646377352 cname:Z4VyVKIgEe7nQO61'],
    ['a time and a version', '12:30:45 Chrome/156.0.8078.79'],
  ])('keeps %s', (_kind, input) => {
    expect(scrubPii(input)).toBe(input);
  });
});

describe('scrubAddresses', () => {
  it('replaces IP addresses and mDNS host names, and nothing else', () => {
    expect(scrubAddresses('host 192.0.2.7, ::1 or 1f0e2c3a-ab.local; ann@example.com')).toBe(
      `host ${REDACTED}, ${REDACTED} or ${REDACTED}; ann@example.com`,
    );
  });
});

describe('redactSdp, as the server re-checks it', () => {
  it('is idempotent and gives back a description with nothing to redact as the same string', () => {
    const once = redactSdp(OFFER);
    expect(redactSdp(once)).toBe(once);
    const clean = sdp('v=0', 's=-', 't=0 0');
    expect(redactSdp(clean)).toBe(clean);
  });

  it('writes bare line feeds as CRLF', () => {
    expect(redactSdp('v=0\ns=-\n')).toBe('v=0\r\ns=-\r\n');
  });
});
