/**
 * The example page: the browser SDK with its WebRTC collector on, pointed at the local server,
 * and a two-peer call with buttons to start it, stop the caller's media for 8 s (one-way media)
 * and hang up.
 * `serve.ts` bundles this file and injects `window.videoCallConfig`.
 */
import { type Client, type InitOptions, init } from '@svc/browser-sdk';
import { type Call, type CallOptions, startCall } from './call.ts';

/** What the page server injects, with `?options=` (JSON) merged over `sdk`. */
export interface PageConfig {
  /** SDK options: `projectKey` and `endpoint` at least. */
  sdk: InitOptions;
  /** The call's ICE setup (e.g. coturn on 127.0.0.1). */
  call?: CallOptions;
}

declare global {
  interface Window {
    videoCallConfig: PageConfig;
    /** The page's controls, for people (buttons) and for tests (`page.evaluate`). */
    videoCall: {
      sdk: Client;
      start(options?: CallOptions): Promise<boolean>;
      pauseCaller(ms: number, kinds?: ReadonlyArray<'audio' | 'video'>): Promise<void>;
      /** The ICE candidate error codes of the call so far. */
      iceErrors(): number[];
      hangUp(): Promise<void>;
    };
  }
}

const query = new URLSearchParams(location.search);
const overrides = JSON.parse(query.get('options') ?? '{}') as {
  sdk?: Partial<InitOptions>;
  call?: CallOptions;
};
const config = window.videoCallConfig;
const base = config.sdk as unknown as InitOptions;
const sdk = init({
  ...base,
  ...overrides.sdk,
  webrtc: { enabled: true, ...base.webrtc, ...overrides.sdk?.webrtc },
});
const status = document.querySelector<HTMLOutputElement>('#status');
const show = (text: string) => {
  if (status !== null) status.value = text;
};
let call: Call | undefined;

window.videoCall = {
  sdk,
  async start(options) {
    show('starting…');
    try {
      call = await startCall({ ...config.call, ...overrides.call, ...options });
    } catch (error) {
      show(`camera or microphone refused: ${(error as Error).name}`);
      throw error;
    }
    for (const [id, pc] of [
      ['#local', call.caller],
      ['#remote', call.callee],
    ] as const) {
      const video = document.querySelector<HTMLVideoElement>(id);
      pc.addEventListener('track', ({ streams }) => {
        if (video !== null && streams[0] !== undefined) video.srcObject = streams[0];
      });
    }
    const connected = await call.connected;
    show(connected ? 'connected' : `could not connect (ICE errors: ${call.iceErrors.join(', ') || 'none'})`);
    return connected;
  },
  async pauseCaller(ms, kinds) {
    show(`the caller sends nothing for ${ms / 1000} s`);
    await call?.pauseCaller(ms, kinds);
    show('connected');
  },
  iceErrors: () => [...(call?.iceErrors ?? [])],
  async hangUp() {
    call?.hangUp();
    call = undefined;
    show('hung up');
    await sdk.flush();
  },
};

const on = (selector: string, action: () => Promise<unknown>) =>
  document.querySelector(selector)?.addEventListener('click', () => void action().catch(() => {}));
on('#start', () => window.videoCall.start());
on('#pause', () => window.videoCall.pauseCaller(8_000));
on('#hangup', () => window.videoCall.hangUp());
