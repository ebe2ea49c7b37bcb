import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { validChunkFixture } from '../../../test/ingest-helpers.ts';
import { MAX_REDACTED_PATHS, REDACTED, recheckCallPrivacy, redactSdp } from './call-privacy.ts';

const t = 1763700000000;
const pc = 'pc_01KAJBCH80XTQ0YDPAV81S476S';
const standard = { strict: false };
const strict = { strict: true };

/** A real offer of headless Chromium 156 with host candidates on 127.0.0.1, 192.0.2.2, ::1 and fd00::2 (a fixture of `@svc/protocol`). */
const OFFER = readFileSync(
  createRequire(import.meta.url).resolve('@svc/protocol/fixtures/sdp/chromium156-offer.sdp'),
  'utf8',
);

const pairChange = {
  t,
  type: 'call.event',
  pc,
  name: 'candidate_pair_change',
  localType: 'srflx',
  remoteType: 'host',
  protocol: 'udp',
  relayed: false,
  initial: true,
};

describe('recheckCallPrivacy', () => {
  it("returns our SDK's chunk as it is: the same array, nothing redacted", async () => {
    const { events: standardEvents } = JSON.parse((await validChunkFixture('call')).toString()) as {
      events: Array<Record<string, unknown>>;
    };
    // In strict mode the SDK records no device labels (the recording was made in standard mode).
    const strictEvents = standardEvents.map(({ label: _label, labels: _labels, ...event }) =>
      event.name === 'data_channel' ? { ...event, label: _label } : event,
    );
    for (const [options, events] of [
      [standard, standardEvents],
      [strict, strictEvents],
    ] as const) {
      const result = recheckCallPrivacy(events, options);
      expect(result.events).toBe(events);
      expect(result.redacted).toEqual([]);
      expect(result.removedEvents).toBe(0);
    }
  });

  it('leaves events other than call events and samples alone', () => {
    const events = [
      { t, type: 'nav', url: 'http://192.0.2.7:8080/call' },
      { t, type: 'error', message: 'turn:turn.example.com failed', source: 'manual' },
      { t, type: 'network.request', address: '192.0.2.7' },
    ];
    expect(recheckCallPrivacy(events, strict).events).toBe(events);
  });

  it('never modifies its input', () => {
    const events = [
      {
        ...pairChange,
        localAddress: '192.0.2.7',
        local: { candidate: 'candidate:1 1 udp 1 192.0.2.7 1 typ host' },
      },
      { t, type: 'call.event', name: 'media_acquired', kind: 'video', deviceId: 'a'.repeat(64) },
    ];
    const before = structuredClone(events);
    const result = recheckCallPrivacy(events, standard);
    expect(events).toEqual(before);
    expect(result.events).not.toBe(events);
  });

  describe('candidate_address: candidate addresses and candidate strings, in any field', () => {
    it('drops address and candidate fields, and redacts addresses found in any other string', () => {
      const sample = {
        t,
        type: 'call.sample',
        pc,
        windowMs: 5000,
        conn: {
          state: 'connected',
          localType: 'host',
          localCandidate:
            'candidate:842163049 1 udp 1677729535 192.0.2.7 56143 typ srflx raddr 10.0.0.2 rport 56143',
        },
        tracks: [{ id: 'trk_1', kind: 'audio', dir: 'in', via: 'relay at 2001:db8::7 then 198.51.100.4' }],
      };
      const events = [
        {
          ...pairChange,
          localAddress: '192.0.2.7',
          Port: 56143,
          remote: { ip: '198.51.100.4', relatedAddress: '10.0.0.2' },
        },
        sample,
        { ...pairChange, note: 'host 6a3f0c2e-1d5b-4c43-9e7a-0f1b2c3d4e5f.local', usernameFragment: 'Bc5S' },
      ];
      const result = recheckCallPrivacy(events, standard);
      expect(result.events).toEqual([
        { ...pairChange, remote: {} },
        {
          ...sample,
          conn: { state: 'connected', localType: 'host', localCandidate: REDACTED },
          tracks: [{ id: 'trk_1', kind: 'audio', dir: 'in', via: `relay at ${REDACTED} then ${REDACTED}` }],
        },
        { ...pairChange, note: `host ${REDACTED}` },
      ]);
      expect(result.redacted).toEqual([
        {
          rule: 'candidate_address',
          count: 8,
          paths: [
            'events[0].localAddress',
            'events[0].Port',
            'events[0].remote.ip',
            'events[0].remote.relatedAddress',
            'events[1].conn.localCandidate',
            'events[1].tracks[0].via',
            'events[2].note',
            'events[2].usernameFragment',
          ],
        },
      ]);
      expect(JSON.stringify(result.events)).not.toMatch(
        /192\.0\.2\.7|198\.51\.100\.4|10\.0\.0\.2|2001:db8|\.local|Bc5S/,
      );
    });

    it('counts every value but reports the first paths only', () => {
      const events = Array.from({ length: 25 }, () => ({ ...pairChange, address: '192.0.2.7' }));
      const [redaction] = recheckCallPrivacy(events, standard).redacted;
      expect(redaction?.count).toBe(25);
      expect(redaction?.paths).toHaveLength(MAX_REDACTED_PATHS);
      expect(redaction?.paths[9]).toBe('events[9].address');
    });

    it('removes a call item whole when redacting a required field leaves it invalid', () => {
      const events = [
        {
          t,
          type: 'call.event',
          pc,
          name: 'codec_change',
          track: 'trk_1',
          codec: 'video/192.0.2.7',
          prev: 'video/VP8',
        },
        { t, type: 'nav', url: '/' },
      ];
      const result = recheckCallPrivacy(events, standard);
      expect(result.events).toEqual([{ t, type: 'nav', url: '/' }]);
      expect(result.removedEvents).toBe(1);
      expect(result.redacted).toEqual([{ rule: 'candidate_address', count: 1, paths: ['events[0].codec'] }]);
    });
  });

  describe('ice_server: servers are counted, never recorded', () => {
    it('redacts server URLs and host:port addresses in errorText, keeping the rest of the message', () => {
      const error = (errorText: string) => ({
        t,
        type: 'call.event',
        pc,
        name: 'ice_candidate_error',
        errorCode: 701,
        errorText,
      });
      const events = [
        error('TURN allocate request timed out for turn:turn.example.com:3478?transport=udp'),
        error('STUN host stun.example.com:19302 unreachable'),
        error('STUN binding request timed out.'),
        error('failed at https://turn.example.com/credentials'),
      ];
      const result = recheckCallPrivacy(events, standard);
      expect(result.events).toEqual([
        error(`TURN allocate request timed out for ${REDACTED}`),
        error(`STUN host ${REDACTED} unreachable`),
        events[2],
        error(`failed at ${REDACTED}`),
      ]);
      expect(result.events[2]).toBe(events[2]);
      expect(result.redacted).toEqual([
        {
          rule: 'ice_server',
          count: 3,
          paths: ['events[0].errorText', 'events[1].errorText', 'events[3].errorText'],
        },
      ]);
    });

    it('keeps the iceServers count and drops server lists, URLs and credentials', () => {
      const created = {
        t,
        type: 'call.event',
        pc,
        name: 'pc_created',
        state: 'new',
        iceServers: 2,
        tracked: true,
      };
      const events = [
        {
          ...created,
          configuration: {
            bundlePolicy: 'max-bundle',
            iceServers: [{ urls: ['turn:turn.example.com'], username: 'u', credential: 'secret' }],
          },
          servers: [{ URLs: 'stun:stun.example.com', Credential: 'secret' }],
        },
      ];
      const result = recheckCallPrivacy(events, standard);
      expect(result.events).toEqual([
        { ...created, configuration: { bundlePolicy: 'max-bundle' }, servers: [{}] },
      ]);
      expect(result.redacted).toEqual([
        {
          rule: 'ice_server',
          count: 3,
          paths: [
            'events[0].configuration.iceServers',
            'events[0].servers[0].URLs',
            'events[0].servers[0].Credential',
          ],
        },
      ]);
    });
  });

  describe('sdp: stripped as the SDK strips it, never stored in strict mode', () => {
    const sdpEvent = (sdp: string) => ({
      t,
      type: 'call.event',
      pc,
      name: 'sdp',
      side: 'local',
      sdpType: 'offer',
      sdp,
    });

    it('strips candidate, c=, ice-ufrag and ice-pwd lines, the candidate ports and addresses of a real offer', () => {
      const redacted = redactSdp(OFFER);
      const dropped = /^(a=candidate|c=|a=ice-ufrag|a=ice-pwd)/;
      expect(OFFER.split('\r\n').filter((line) => dropped.test(line)).length).toBeGreaterThanOrEqual(16);
      // Exactly the SDK's redaction (packages/browser-sdk/src/webrtc/sdp.test.ts).
      const expected = OFFER.split('\r\n')
        .filter((line) => !dropped.test(line))
        .map((line) =>
          line
            .replace(/^(o=- \d+ \d+ IN IP4) 127\.0\.0\.1$/, `$1 ${REDACTED}`)
            .replace(/^(m=\w+) \d+ /, '$1 9 ')
            .replace(/^a=rtcp:9 IN IP4 0\.0\.0\.0$/, `a=rtcp:9 IN IP4 ${REDACTED}`),
        );
      expect(redacted.split('\r\n')).toEqual(expected);
      for (const secret of ['127.0.0.1', '192.0.2.2', '::1', 'fd00::2', 'typ host'])
        expect(redacted).not.toContain(secret);
      // What the SDK sends is a fixed point: the same string back, so its chunks are not re-encoded.
      expect(redactSdp(redacted)).toBe(redacted);
      const sent = [sdpEvent(redacted)];
      expect(recheckCallPrivacy(sent, standard).events).toBe(sent);
    });

    it('redacts an unredacted sdp event, and SDP in any other field or string', () => {
      const events = [
        sdpEvent(OFFER),
        {
          ...pairChange,
          description: { type: 'answer', sdp: 'a=ice-pwd:ZR+J9cjXwdf8YDJSo4lc+HCk\r\na=mid:0' },
        },
        { ...pairChange, raw: 'v=0\r\no=- 1 2 IN IP4 192.0.2.7\r\na=ice-ufrag:Bc5S' },
      ];
      const result = recheckCallPrivacy(events, standard);
      expect(result.events).toEqual([
        sdpEvent(redactSdp(OFFER)),
        { ...pairChange, description: { type: 'answer', sdp: 'a=mid:0' } },
        { ...pairChange, raw: `v=0\r\no=- 1 2 IN IP4 ${REDACTED}` },
      ]);
      expect(result.redacted).toEqual([
        { rule: 'sdp', count: 3, paths: ['events[0].sdp', 'events[1].description.sdp', 'events[2].raw'] },
      ]);
    });

    it('in strict mode removes sdp events and drops SDP anywhere else', () => {
      const events = [
        sdpEvent(redactSdp(OFFER)),
        { ...pairChange, description: { type: 'answer', sdp: 'a=mid:0' }, raw: 'v=0\r\na=mid:0' },
        { t, type: 'nav', url: '/' },
      ];
      const result = recheckCallPrivacy(events, strict);
      expect(result.events).toEqual([
        { ...pairChange, description: { type: 'answer' }, raw: REDACTED },
        events[2],
      ]);
      expect(result.removedEvents).toBe(1);
      expect(result.redacted).toEqual([
        { rule: 'sdp', count: 3, paths: ['events[0]', 'events[1].description.sdp', 'events[1].raw'] },
      ]);
    });
  });

  describe('device_id: always a salted hash', () => {
    it('keeps a salted hash and drops anything else, whatever the case of the field name', () => {
      const acquired = { t, type: 'call.event', name: 'media_acquired', kind: 'video', w: 1280, h: 720 };
      const hashed = { ...acquired, deviceId: '3fa9c0d2e4b61a7f' };
      const events = [
        hashed,
        { ...acquired, deviceId: 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855' },
        { ...acquired, deviceId: 'default' },
        {
          ...acquired,
          deviceId: '3FA9C0D2E4B61A7F',
          groupId: 'Dp0cV3x8ZtHCpdczhV/bPNukvdvCl7kFt3+IgKE9Gn8=',
        },
        { ...pairChange, device: { DeviceID: 42 } },
      ];
      const result = recheckCallPrivacy(events, standard);
      expect(result.events).toEqual([hashed, acquired, acquired, acquired, { ...pairChange, device: {} }]);
      expect(result.events[0]).toBe(hashed);
      expect(result.redacted).toEqual([
        {
          rule: 'device_id',
          count: 5,
          paths: [
            'events[1].deviceId',
            'events[2].deviceId',
            'events[3].deviceId',
            'events[3].groupId',
            'events[4].device.DeviceID',
          ],
        },
      ]);
    });
  });

  describe('data_channel_payload: label and state only', () => {
    it('drops every other field of a data_channel event', () => {
      const channel = { t, type: 'call.event', pc, name: 'data_channel', label: 'chat', state: 'open' };
      const events = [
        channel,
        {
          ...channel,
          data: 'hello Ada, my card is 4111 1111 1111 1111',
          binaryType: 'arraybuffer',
          messages: [{ text: 'hi' }],
        },
      ];
      const result = recheckCallPrivacy(events, standard);
      expect(result.events).toEqual([channel, channel]);
      expect(result.events[0]).toBe(channel);
      expect(result.redacted).toEqual([
        {
          rule: 'data_channel_payload',
          count: 3,
          paths: ['events[1].data', 'events[1].binaryType', 'events[1].messages'],
        },
      ]);
    });
  });

  it('looks into call events of unknown names too, and keeps what is allowed', () => {
    const events = [
      {
        t,
        type: 'call.event',
        pc,
        name: 'ice_candidate',
        candidate: 'candidate:1 1 udp 1 192.0.2.7 1 typ host',
        sdpMid: '0',
      },
      { t, type: 'call.event', pc, name: 'bandwidth_probe', probeKbps: 1200 },
    ];
    const result = recheckCallPrivacy(events, standard);
    expect(result.events).toEqual([
      { t, type: 'call.event', pc, name: 'ice_candidate', sdpMid: '0' },
      events[1],
    ]);
    expect(result.redacted).toEqual([
      { rule: 'candidate_address', count: 1, paths: ['events[0].candidate'] },
    ]);
  });

  it('keeps a field named __proto__ as data, never as a prototype', () => {
    const [event] = JSON.parse(
      `[{"t":${t},"type":"call.event","pc":"${pc}","name":"ice_restart","__proto__":{"note":"via 192.0.2.7","polluted":true}}]`,
    ) as Array<Record<string, unknown>>;
    const result = recheckCallPrivacy([event], standard);
    const [kept] = result.events as Array<Record<string, unknown>>;
    expect(Object.getPrototypeOf(kept)).toBe(Object.prototype);
    expect(Object.hasOwn(kept as object, '__proto__')).toBe(true);
    expect(JSON.stringify(kept)).toContain(`"__proto__":{"note":"via ${REDACTED}","polluted":true}`);
  });
});
