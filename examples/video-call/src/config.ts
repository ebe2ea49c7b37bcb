/**
 * What the page server injects into the example page (`window.videoCallConfig`), in types
 * both sides share: the page's (DOM) and the server's (Node).
 */

/** The call's ICE setup, as `RTCConfiguration` takes it. */
export interface CallOptions {
  /** STUN/TURN servers (`turn:127.0.0.1:3478` for coturn). Default none: host candidates. */
  iceServers?: Array<{ urls: string | string[]; username?: string; credential?: string }>;
  /** `relay` forces every path through a TURN relay. */
  iceTransportPolicy?: 'all' | 'relay';
  /** Send audio both ways. Default true. */
  audio?: boolean;
}

export interface PageConfig {
  /** `@svc/browser-sdk` `init` options: `projectKey` and `endpoint` at least. */
  sdk: { projectKey: string; endpoint: string } & Record<string, unknown>;
  /** The call's ICE setup (e.g. coturn on 127.0.0.1). */
  call?: CallOptions;
}
