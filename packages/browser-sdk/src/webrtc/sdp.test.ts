import { REDACTED } from '@svc/protocol/redaction';
import { describe, expect, it } from 'vitest';
import { describeApplied } from './sdp.ts';

// The redaction itself is @svc/protocol's (src/redaction.test.ts there).

const sdp = (...lines: string[]) => `${lines.join('\r\n')}\r\n`;
const BASE = ['v=0', 'o=- 4611731400430051336 2 IN IP4 127.0.0.1', 's=-', 't=0 0'];

describe('describeApplied', () => {
  const pc = {
    localDescription: { type: 'offer', sdp: sdp(...BASE, 'a=ice-ufrag:Bc5S') },
    remoteDescription: { type: 'answer', sdp: sdp('v=0', 'c=IN IP4 10.1.2.3') },
  } as unknown as RTCPeerConnection;

  it('describes what the connection holds on the side applied, redacted', () => {
    expect(describeApplied(pc, 'setLocalDescription', undefined)).toEqual({
      side: 'local',
      sdpType: 'offer',
      sdp: sdp('v=0', `o=- 4611731400430051336 2 IN IP4 ${REDACTED}`, 's=-', 't=0 0'),
    });
    expect(describeApplied(pc, 'setRemoteDescription', { type: 'answer', sdp: 'ignored' })).toEqual({
      side: 'remote',
      sdpType: 'answer',
      sdp: sdp('v=0'),
    });
  });

  it('describes a rollback as given, with no SDP', () => {
    expect(describeApplied(pc, 'setLocalDescription', { type: 'rollback' })).toEqual({
      side: 'local',
      sdpType: 'rollback',
      sdp: '',
    });
  });
});
