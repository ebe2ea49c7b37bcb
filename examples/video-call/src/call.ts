/**
 * A two-peer video call inside one page: a caller and a callee `RTCPeerConnection`, each sending
 * its own camera and microphone to the other, signalled in memory. The browser SDK's collector
 * instruments both (it wraps `RTCPeerConnection` and `getUserMedia`), as it would in an app.
 */

import type { CallOptions } from './config.ts';

export type { CallOptions } from './config.ts';

export interface Call {
  readonly caller: RTCPeerConnection;
  readonly callee: RTCPeerConnection;
  /** Resolves `true` once both peers are connected, `false` if one fails or 20 s pass. */
  readonly connected: Promise<boolean>;
  /** The `icecandidateerror` codes either peer reported (701: a STUN/TURN server did not answer). */
  readonly iceErrors: number[];
  /**
   * Stops sending the caller's media of `kinds` for `ms` (`sender.replaceTrack(null)`: the track
   * stays live, nothing is sent), then resumes it: one-way media.
   */
  pauseCaller(ms: number, kinds?: ReadonlyArray<'audio' | 'video'>): Promise<void>;
  /** Closes both peers and stops the camera and microphone. */
  hangUp(): void;
}

function connectedOrFailed(pc: RTCPeerConnection): Promise<boolean> {
  return new Promise((resolve) => {
    const check = () => {
      if (pc.connectionState === 'connected') resolve(true);
      else if (pc.connectionState === 'failed' || pc.connectionState === 'closed') resolve(false);
    };
    pc.addEventListener('connectionstatechange', check);
    setTimeout(() => resolve(false), 20_000);
    check();
  });
}

/**
 * Starts the call: camera and microphone for each side (the browser asks for permission), an
 * offer from the caller, the answer from the callee, ICE candidates passed over as they come.
 * Rejects with the `getUserMedia` error when the devices are denied.
 *
 * @example
 * ```ts
 * const call = await startCall({ iceServers: [{ urls: 'turn:127.0.0.1:3478', username: 'test', credential: 'test' }], iceTransportPolicy: 'relay' });
 * await call.connected;
 * call.hangUp();
 * ```
 */
export async function startCall(options: CallOptions = {}): Promise<Call> {
  const constraints = { audio: options.audio !== false, video: { width: 640, height: 480 } };
  const callerMedia = await navigator.mediaDevices.getUserMedia(constraints);
  const calleeMedia = await navigator.mediaDevices.getUserMedia(constraints);
  const configuration: RTCConfiguration = {
    iceServers: options.iceServers ?? [],
    ...(options.iceTransportPolicy === undefined ? {} : { iceTransportPolicy: options.iceTransportPolicy }),
  };
  const caller = new RTCPeerConnection(configuration);
  const callee = new RTCPeerConnection(configuration);
  const iceErrors: number[] = [];
  for (const pc of [caller, callee])
    pc.addEventListener('icecandidateerror', (event) =>
      iceErrors.push((event as RTCPeerConnectionIceErrorEvent).errorCode),
    );
  caller.addEventListener('icecandidate', ({ candidate }) => {
    if (candidate !== null) callee.addIceCandidate(candidate).catch(() => {});
  });
  callee.addEventListener('icecandidate', ({ candidate }) => {
    if (candidate !== null) caller.addIceCandidate(candidate).catch(() => {});
  });
  for (const track of callerMedia.getTracks()) caller.addTrack(track, callerMedia);
  for (const track of calleeMedia.getTracks()) callee.addTrack(track, calleeMedia);
  const connected = Promise.all([connectedOrFailed(caller), connectedOrFailed(callee)]).then((states) =>
    states.every(Boolean),
  );
  await caller.setLocalDescription(await caller.createOffer());
  await callee.setRemoteDescription(caller.localDescription as RTCSessionDescription);
  await callee.setLocalDescription(await callee.createAnswer());
  await caller.setRemoteDescription(callee.localDescription as RTCSessionDescription);

  return {
    caller,
    callee,
    connected,
    iceErrors,
    async pauseCaller(ms, kinds = ['audio', 'video']) {
      const paused = caller
        .getSenders()
        .flatMap((sender) =>
          sender.track !== null && kinds.includes(sender.track.kind as 'audio' | 'video')
            ? [{ sender, track: sender.track }]
            : [],
        );
      if (paused.length === 0) throw new Error(`the caller sends no ${kinds.join(' or ')}`);
      await Promise.all(paused.map(({ sender }) => sender.replaceTrack(null)));
      await new Promise((resolve) => setTimeout(resolve, ms));
      await Promise.all(paused.map(({ sender, track }) => sender.replaceTrack(track)));
    },
    hangUp() {
      caller.close();
      callee.close();
      for (const track of [...callerMedia.getTracks(), ...calleeMedia.getTracks()]) track.stop();
    },
  };
}
