// The written tables an explanation is made from: for each detector kind and each class of
// browser error, the likely causes and what to try, with the conditions that make one cause more
// likely than another (as watchRTC-style rules do). Deterministic: the same evidence gives the same
// ranked causes. servers/api/README.md (Explanations) prints the tables.

/** How sure a cause is, given the evidence. */
type Confidence = 'high' | 'medium' | 'low';

/** A likely cause of a problem and what to try. */
export interface Cause {
  /** Stable identifier (`turn_unreachable`, `encoder_load`, ...). */
  id: string;
  title: string;
  /** Why the evidence points there. */
  why: string;
  /** What to try, most useful first. */
  tryThis: string[];
  confidence: Confidence;
}

/** What the rules may look at besides the problem's own evidence: the call it happened in. */
export interface CauseContext {
  /** The call's row, when the problem belongs to one. */
  call?: {
    relayed: boolean;
    networkType: string | null;
    protocol?: string | null;
  };
  /** Names of the call's events (`ice_candidate_error`, `ice_restart`, ...), with how many of each. */
  callEvents?: ReadonlyMap<string, number>;
  /** Other detector kinds found in the same call. */
  otherFindings?: ReadonlySet<string>;
  /** A failed request shortly before (an error), with its status or failure. */
  failedRequestBefore?: { status?: number; failure?: string; url: string };
}

const RANK: Record<Confidence, number> = { high: 0, medium: 1, low: 2 };

/** Causes, most confident first (ties keep the table's order). */
function ranked(causes: Array<Cause | undefined | false>): Cause[] {
  return causes
    .filter((cause): cause is Cause => cause !== undefined && cause !== false)
    .map((cause, order) => ({ cause, order }))
    .sort((a, b) => RANK[a.cause.confidence] - RANK[b.cause.confidence] || a.order - b.order)
    .map(({ cause }) => cause);
}

const has = (context: CauseContext, kind: string) => context.otherFindings?.has(kind) === true;
const events = (context: CauseContext, name: string) => context.callEvents?.get(name) ?? 0;

function num(evidence: Record<string, unknown>, key: string): number | undefined {
  const value = evidence[key];
  return typeof value === 'number' && Number.isFinite(value) ? value : undefined;
}

function str(evidence: Record<string, unknown>, key: string): string | undefined {
  const value = evidence[key];
  return typeof value === 'string' ? value : undefined;
}

const TURN_REACHABILITY: Cause = {
  id: 'turn_unreachable',
  title: 'The STUN/TURN server could not be reached',
  why: 'The browser reported ICE candidate errors while gathering: its STUN or TURN server did not answer or refused it, so no candidate pair could form.',
  tryThis: [
    'Check that the TURN URLs, username and credential the page receives are current (short-lived TURN credentials expire).',
    'Open UDP 3478 and the relay port range on the TURN server, and offer TURN over TLS on 443 (turns:) for networks that allow only HTTPS.',
    'Test the server with a trickle-ICE page from the same network.',
  ],
  confidence: 'high',
};

/**
 * The likely causes of a detector finding, ranked, from its evidence and its call's context.
 *
 * @example
 * ```ts
 * detectorCauses('webrtc_cpu_limited', { ratioPct: 45 }, {})[0].id; // 'encoder_load'
 * ```
 */
export function detectorCauses(
  kind: string,
  evidence: Record<string, unknown>,
  context: CauseContext,
): Cause[] {
  const call = context.call;
  switch (kind) {
    case 'webrtc_connect_failure': {
      const iceErrors = events(context, 'ice_candidate_error');
      return ranked([
        iceErrors > 0 && TURN_REACHABILITY,
        evidence.everConnected === true && {
          id: 'connection_lost',
          title: 'The connection was lost after it was up',
          why: 'The call had connected, then ICE failed: the network changed (Wi-Fi to cellular, VPN) or the other peer went away.',
          tryThis: [
            'Restart ICE (pc.restartIce()) when the connection state becomes disconnected or failed.',
            'Listen for network changes and renegotiate; keep a TURN relay candidate as a fallback path.',
          ],
          confidence: 'high',
        },
        {
          id: 'firewall_blocks_udp',
          title: 'A firewall or symmetric NAT blocks every direct path',
          why:
            evidence.reason === 'timeout'
              ? `The connection never reached "connected" within ${num(evidence, 'timeoutMs') ?? 15_000} ms.`
              : 'ICE reached "failed": no candidate pair worked.',
          tryThis: [
            'Provide a TURN server, with TURN over TCP/TLS on port 443 for corporate networks.',
            'Check that both peers exchange their candidates (trickle ICE through the signaling channel) and that end-of-candidates is signaled.',
          ],
          confidence: iceErrors === 0 && evidence.everConnected !== true ? 'high' : 'medium',
        },
        {
          id: 'signaling_incomplete',
          title: 'The offer/answer exchange did not finish',
          why: 'Without a remote description or remote candidates, ICE has nothing to check and times out.',
          tryThis: [
            'Log the signaling state changes on both sides and check the answer reached the caller.',
            'Check the signaling server delivered every message (reconnects of its WebSocket lose messages).',
          ],
          confidence: 'low',
        },
      ]);
    }
    case 'webrtc_one_way_media': {
      const direction = str(evidence, 'direction');
      return ranked([
        direction === 'in' && {
          id: 'remote_not_sending',
          title: 'The other side sends nothing',
          why: 'This side sent media while nothing arrived from the peer for the sustained window, though both directions were negotiated.',
          tryThis: [
            "Check the remote peer's sender: a track replaced with null, a disabled or ended track, or a camera that failed on that side.",
            'Check the negotiated directions (sendrecv on both sides, not recvonly/sendonly by mistake).',
          ],
          confidence: 'high',
        },
        direction === 'out' && {
          id: 'local_not_sending',
          title: 'This side sends nothing',
          why: 'Media arrived from the peer while nothing left this side: the local sender has no live track.',
          tryThis: [
            'Check replaceTrack(null), an ended capture track (device unplugged or taken by another app) and track.enabled.',
            'Look for media_error events around the start of the call.',
          ],
          confidence: 'high',
        },
        {
          id: 'asymmetric_path',
          title: 'One direction of the network path is blocked',
          why: 'A firewall or NAT that lets packets through in one direction only gives exactly one-way media.',
          tryThis: [
            'Force a TURN relay (iceTransportPolicy: "relay") to test whether the direct path is the problem.',
          ],
          confidence: call?.relayed === true ? 'low' : 'medium',
        },
      ]);
    }
    case 'webrtc_media_permission_denied':
      return ranked([
        {
          id: 'permission_denied',
          title: 'The camera or microphone permission was refused',
          why: `getUserMedia failed with ${str(evidence, 'errorName') ?? 'NotAllowedError'}: the person or the browser refused access${str(evidence, 'mediaKind') === undefined ? '' : ` to the ${str(evidence, 'mediaKind')}`}.`,
          tryThis: [
            'Explain before the prompt why the camera or microphone is needed, and show how to re-enable it in the site settings when refused.',
            'Embedded in an iframe: add allow="camera; microphone" and check the Permissions-Policy header.',
            'Serve the page over HTTPS (getUserMedia needs a secure context).',
          ],
          confidence: 'high',
        },
      ]);
    case 'webrtc_device_unavailable': {
      const errorName = str(evidence, 'errorName');
      return ranked([
        errorName === 'NotReadableError' && {
          id: 'device_in_use',
          title: 'The device is used by another application',
          why: 'NotReadableError: the operating system would not hand the device over, most often because another app (a video-call client, another tab) holds it.',
          tryThis: [
            'Ask the person to close other apps using the camera, or offer to continue with audio only.',
            'Retry getUserMedia after a short delay, and let the person choose another device.',
          ],
          confidence: 'high',
        },
        errorName === 'NotFoundError' && {
          id: 'no_device',
          title: 'No such device is attached',
          why: 'NotFoundError: no camera or microphone matched the request.',
          tryThis: [
            'Check enumerateDevices() before asking, and offer audio-only or view-only joining.',
            'Relax exact deviceId constraints left over from a device that is gone.',
          ],
          confidence: 'high',
        },
        {
          id: 'driver_problem',
          title: 'The device or its driver failed',
          why: 'A device that exists but cannot start can also be a driver or hardware fault.',
          tryThis: [
            'Suggest another device or a browser restart; collect the device counts from device_inventory.',
          ],
          confidence: 'low',
        },
      ]);
    }
    case 'webrtc_freeze':
      return ranked([
        (has(context, 'webrtc_packet_loss') || has(context, 'webrtc_low_resolution')) && {
          id: 'network_congestion',
          title: 'Network congestion starved the video',
          why: 'The same call lost packets or dropped its resolution: frames arrived too late or incomplete to be shown.',
          tryThis: [
            'Enable RTX and FEC, and simulcast so receivers on a bad link get a lower layer.',
            'Lower the maximum bitrate; prefer a wired connection or a closer TURN server.',
          ],
          confidence: 'high',
        },
        has(context, 'webrtc_cpu_limited') && {
          id: 'sender_cpu',
          title: 'The sender was CPU-limited',
          why: 'The encoder could not keep up, so frames were dropped at the source.',
          tryThis: [
            'Lower the capture resolution or frame rate; use hardware encoding (H.264 or VP8 over VP9/AV1).',
          ],
          confidence: 'high',
        },
        {
          id: 'keyframe_recovery',
          title: 'Lost frames waited for a key frame',
          why: `A freeze of ${num(evidence, 'freezeMs') ?? '?'} ms${str(evidence, 'reason') === 'ratio' ? ` (${num(evidence, 'ratioPct') ?? '?'}% of the observed time frozen)` : ''}: the decoder stopped until a key frame repaired the stream.`,
          tryThis: [
            'Check PLI/NACK counts in the call detail: answer picture loss indications quickly, enable RTX.',
            'Look at the receiving device: a slow decoder also freezes video.',
          ],
          confidence: 'medium',
        },
      ]);
    case 'webrtc_audio_dropout':
      return ranked([
        {
          id: 'audio_packet_loss',
          title: 'Audio packets were lost or came too late',
          why: `The receiver concealed ${num(evidence, 'concealmentPct') ?? '?'}% of the audio (synthesized samples where packets were missing) for ${num(evidence, 'sustainedMs') ?? '?'} ms.`,
          tryThis: [
            'Enable Opus in-band FEC (useinbandfec=1) and keep packet time at 20 ms.',
            'Check the network: Wi-Fi interference, a congested uplink on the sending side.',
          ],
          confidence: 'high',
        },
        call?.relayed === true &&
          call.protocol !== undefined &&
          call.protocol !== null &&
          call.protocol !== 'udp' && {
            id: 'tcp_relay',
            title: 'Media went through a TCP/TLS relay',
            why: 'Over TCP, one lost packet holds back every later one (head-of-line blocking), which audio hears as dropouts.',
            tryThis: [
              'Open UDP to the TURN server so the relay can use UDP; keep TCP/TLS only as the last resort.',
            ],
            confidence: 'medium',
          },
      ]);
    case 'webrtc_reconnect_storm':
      return ranked([
        {
          id: 'unstable_network',
          title: 'The network kept changing',
          why: `${num(evidence, 'count') ?? '?'} path changes or ICE restarts within ${num(evidence, 'windowMs') ?? 60_000} ms (${num(evidence, 'iceRestarts') ?? 0} ICE restarts): Wi-Fi roaming, a cellular handover or a VPN reconnecting.`,
          tryThis: [
            'Debounce ICE restarts (wait for "disconnected" to last a few seconds) instead of restarting on every change.',
            'A TURN relay gives a stable path while the device moves between networks.',
          ],
          confidence: 'high',
        },
        call?.networkType === 'cellular' && {
          id: 'cellular_handover',
          title: 'Cellular handovers',
          why: 'The call ran on a cellular network, where handovers change the address.',
          tryThis: ['Prefer a relay candidate on mobile networks; test with network changes in the app.'],
          confidence: 'medium',
        },
      ]);
    case 'webrtc_call_abandoned':
      return ranked([
        {
          id: 'left_over_quality',
          title: 'The person left because the call was bad',
          why: `The call ended after ${num(evidence, 'durationMs') ?? '?'} ms with a quality score of ${num(evidence, 'score') ?? '?'}: too short and too poor to be a finished call.`,
          tryThis: [
            'Look at the other findings of the call for the problem they left over.',
            'Show a network warning and a reconnect option when quality drops in the first seconds.',
          ],
          confidence: (context.otherFindings?.size ?? 0) > 0 ? 'high' : 'medium',
        },
      ]);
    case 'webrtc_packet_loss':
      return ranked([
        call?.relayed === true && {
          id: 'relay_distance',
          title: 'The TURN relay is far or loaded',
          why: `The call went through a TURN relay and lost ${num(evidence, 'lossPct') ?? '?'}% of its packets.`,
          tryThis: [
            "Deploy TURN servers in the regions of your users and pick the nearest; watch the relay's CPU and bandwidth.",
          ],
          confidence: 'medium',
        },
        {
          id: 'network_congestion',
          title: 'Congestion on the way: usually Wi-Fi or an uplink',
          why: `${num(evidence, 'lossPct') ?? '?'}% loss sustained for ${num(evidence, 'sustainedMs') ?? '?'} ms${call?.networkType === null || call?.networkType === undefined ? '' : ` on ${call.networkType}`}.`,
          tryThis: [
            'Enable FEC and RTX; use simulcast so a lossy receiver gets a lower layer.',
            'Lower the bitrate when loss rises (the congestion controller does, unless a fixed bitrate is forced).',
            'Suggest a wired connection or moving closer to the access point.',
          ],
          confidence: 'high',
        },
      ]);
    case 'webrtc_high_latency':
      return ranked([
        {
          id: 'long_path',
          title: 'The media path is long',
          why: `Round trip time of ${num(evidence, 'rttMs') ?? '?'} ms for ${num(evidence, 'sustainedMs') ?? '?'} ms${call?.relayed === true ? ', through a TURN relay' : ''}: distance, a far relay or a VPN.`,
          tryThis: [
            call?.relayed === true
              ? 'Use a TURN server in the region of the callers, not one far from both.'
              : 'Check for a VPN or a corporate proxy on the path.',
            'Look for bufferbloat: latency that grows with the bitrate on a saturated uplink.',
          ],
          confidence: 'high',
        },
      ]);
    case 'webrtc_cpu_limited':
      return ranked([
        {
          id: 'encoder_load',
          title: 'The encoder was limited by the CPU',
          why: `The sender's encoder was CPU-limited ${num(evidence, 'ratioPct') ?? '?'}% of the observed time: the device could not encode at the wanted resolution and frame rate.`,
          tryThis: [
            'Capture at a lower resolution or frame rate, or send fewer simulcast layers.',
            'Prefer codecs with hardware encoders on the device (H.264, VP8) over VP9/AV1 in software.',
            'Check for other load on the device: many tabs, background blur or effects.',
          ],
          confidence: 'high',
        },
      ]);
    case 'webrtc_low_resolution':
      return ranked([
        has(context, 'webrtc_cpu_limited') && {
          id: 'cpu_adaptation',
          title: 'The resolution was lowered for the CPU',
          why: 'The same call was CPU-limited: WebRTC lowers the resolution to keep up.',
          tryThis: ['See the CPU-limited finding: lower the capture load or use hardware encoding.'],
          confidence: 'high',
        },
        {
          id: 'bandwidth_adaptation',
          title: 'The resolution was lowered for the bandwidth',
          why: `The video dropped to ${num(evidence, 'h') ?? '?'} px high after ${num(evidence, 'previousH') ?? '?'} px, for ${num(evidence, 'sustainedMs') ?? '?'} ms: the bandwidth estimate fell.`,
          tryThis: [
            'Check the available bandwidth in the call detail (availableOutgoingKbps) and loss on the same call.',
            'Set degradationPreference to "maintain-resolution" where sharpness matters more than motion (screen sharing).',
          ],
          confidence: 'medium',
        },
      ]);
    case 'webrtc_relay_fallback': {
      const protocol = str(evidence, 'protocol');
      return ranked([
        protocol !== undefined &&
          protocol !== 'udp' && {
            id: 'udp_blocked',
            title: 'UDP is blocked: the relay runs over TCP/TLS',
            why: `The selected path is a TURN relay over ${protocol}: the network lets no UDP through.`,
            tryThis: [
              'Nothing to fix on the client; expect higher latency. Keep TURN over TLS on 443 for these networks.',
            ],
            confidence: 'high',
          },
        {
          id: 'nat_traversal',
          title: 'No direct path: a symmetric NAT or firewall',
          why: `The call fell back to a relay (${str(evidence, 'localType') ?? '?'} ↔ ${str(evidence, 'remoteType') ?? '?'}): the peers could not reach each other directly.`,
          tryThis: [
            'Expected on some corporate and mobile networks; it costs relay bandwidth and some latency.',
            'Check the STUN server is reachable, so server-reflexive candidates are gathered.',
          ],
          confidence: 'medium',
        },
        events(context, 'ice_candidate_error') > 0 && {
          ...TURN_REACHABILITY,
          id: 'stun_unreachable',
          title: 'The STUN server could not be reached',
          why: 'ICE candidate errors while gathering: without server-reflexive candidates only the relay is left.',
          confidence: 'medium',
        },
      ]);
    }
    default:
      return [];
  }
}

/** The classes of browser errors the table knows, by what their name and message say. */
const ERROR_CLASSES: Array<{
  id: string;
  matches: (name: string, message: string) => boolean;
  cause: Omit<Cause, 'confidence'>;
}> = [
  {
    id: 'chunk_load',
    matches: (name, message) =>
      name === 'ChunkLoadError' ||
      /loading (css )?chunk \S+ failed|failed to fetch dynamically imported module|importing a module script failed|error loading dynamically imported module/i.test(
        message,
      ),
    cause: {
      id: 'stale_deploy',
      title: 'A code chunk of an older deploy is gone',
      why: 'The page loaded before a deploy and then asked for a lazy chunk that the new deploy removed.',
      tryThis: [
        "Keep the previous deploy's assets online for a while after each release.",
        'Reload the page once when a dynamic import fails (vite:preloadError, webpack ChunkLoadError).',
      ],
    },
  },
  {
    id: 'json_parse',
    matches: (name, message) =>
      name === 'SyntaxError' &&
      /json|unexpected token|unexpected end of (json )?input|is not valid json/i.test(message),
    cause: {
      id: 'non_json_response',
      title: 'A response that was not JSON was parsed as JSON',
      why: "JSON.parse (or response.json()) met HTML or an empty body: typically an error page, a login redirect or a proxy's answer.",
      tryThis: [
        'Check response.ok and the content type before parsing; look at the failed request just before.',
      ],
    },
  },
  {
    id: 'network',
    matches: (name, message) =>
      /failed to fetch|networkerror when attempting to fetch|load failed|network request failed|the network connection was lost/i.test(
        message,
      ) || name === 'NetworkError',
    cause: {
      id: 'network_failure',
      title: 'A request never got an answer',
      why: 'fetch rejects only when there is no HTTP answer: offline, DNS, a CORS refusal, an ad blocker or a cancelled navigation.',
      tryThis: [
        'Check the CORS headers of the API for this origin, and the failed requests in the session.',
        'Retry idempotent requests with backoff and tell the person when they are offline.',
      ],
    },
  },
  {
    id: 'null_access',
    matches: (name, message) =>
      name === 'TypeError' &&
      /cannot read propert|cannot set propert|undefined is not an object|null is not an object|is (undefined|null)\b|of (undefined|null)\b/i.test(
        message,
      ),
    cause: {
      id: 'missing_data',
      title: 'Code read a property of data that was not there',
      why: 'A value was undefined or null where the code expected an object: data not loaded yet, an API answer of another shape, or an element that is not on the page.',
      tryThis: [
        'Guard the access (optional chaining) and handle the loading and empty states.',
        'Check the API answer the code read just before: a failed or changed response leaves fields undefined.',
      ],
    },
  },
  {
    id: 'not_a_function',
    matches: (name, message) =>
      name === 'TypeError' && /is not a function|is not a constructor|is not iterable/i.test(message),
    cause: {
      id: 'wrong_type',
      title: 'A value of the wrong type was called or iterated',
      why: 'Something expected a function or a list got another value: an API that a browser lacks, a changed library version, or data of another shape.',
      tryThis: [
        'Check the browser versions the error concentrates in (a missing API); check the data shape.',
      ],
    },
  },
  {
    id: 'reference',
    matches: (name) => name === 'ReferenceError',
    cause: {
      id: 'undefined_name',
      title: 'A name that does not exist was used',
      why: 'A global was used before its script loaded (a blocked third-party script), a browser lacks the API, or a variable was misspelled.',
      tryThis: [
        'Load the script the name comes from before use, or check for it; check the browsers it happens in.',
      ],
    },
  },
  {
    id: 'recursion',
    matches: (name, message) => name === 'RangeError' && /call stack/i.test(message),
    cause: {
      id: 'infinite_recursion',
      title: 'Endless recursion',
      why: 'The call stack overflowed: a function calls itself (or an effect re-triggers itself) without end.',
      tryThis: [
        'Read the repeating frames of the stack for the cycle; check effects that set the state they depend on.',
      ],
    },
  },
  {
    id: 'quota',
    matches: (name, message) => name === 'QuotaExceededError' || /quota/i.test(message),
    cause: {
      id: 'storage_full',
      title: 'Browser storage is full or unavailable',
      why: 'localStorage, IndexedDB or the Cache API refused a write: full, or restricted (private browsing).',
      tryThis: ['Catch storage writes, evict old entries, and work without storage when it is refused.'],
    },
  },
  {
    id: 'security',
    matches: (name) => name === 'SecurityError',
    cause: {
      id: 'blocked_by_browser',
      title: 'The browser blocked an access',
      why: 'Cross-origin frame access, storage blocked by privacy settings, or a feature that needs a secure context.',
      tryThis: [
        "Check which access the frames point to; avoid reading other origins' frames; serve over HTTPS.",
      ],
    },
  },
  {
    id: 'script_error',
    matches: (name, message) => /^script error\.?$/i.test(message.trim()) || /^script error\.?$/i.test(name),
    cause: {
      id: 'cross_origin_script',
      title: 'An error in a cross-origin script, hidden by the browser',
      why: 'Browsers hide the details of errors in scripts of another origin loaded without CORS.',
      tryThis: [
        'Add crossorigin="anonymous" to the script tag and serve the script with Access-Control-Allow-Origin.',
      ],
    },
  },
  {
    id: 'resize_observer',
    matches: (_name, message) => /resizeobserver loop/i.test(message),
    cause: {
      id: 'benign_resize_observer',
      title: 'A benign ResizeObserver notice',
      why: 'Layout changed inside a ResizeObserver callback; the browser delivers the rest in the next frame. Nothing breaks.',
      tryThis: ['Filter it out of error reporting, or defer the layout change to requestAnimationFrame.'],
    },
  },
  {
    id: 'abort',
    matches: (name) => name === 'AbortError',
    cause: {
      id: 'aborted',
      title: 'An operation was cancelled',
      why: 'A request or media operation was aborted, usually by navigation or a newer request: often harmless.',
      tryThis: ['Ignore AbortError where the abort was intended (AbortController on unmount).'],
    },
  },
];

/** The class of a browser error by its name and message (`chunk_load`, `null_access`, ...), or `other`. */
export function errorClass(name: string, message: string): string {
  return ERROR_CLASSES.find((entry) => entry.matches(name, message))?.id ?? 'other';
}

/**
 * The likely causes of a browser error, ranked: its class's cause, and a failed request just
 * before it when there was one.
 *
 * @example
 * ```ts
 * errorCauses('TypeError', "Cannot read properties of undefined (reading 'items')", {})[0].id; // 'missing_data'
 * ```
 */
export function errorCauses(name: string, message: string, context: CauseContext): Cause[] {
  const known = ERROR_CLASSES.find((entry) => entry.matches(name, message));
  const before = context.failedRequestBefore;
  return ranked([
    before !== undefined && {
      id: 'after_failed_request',
      title: 'It followed a failed request',
      why: `The request to ${before.url} failed (${before.status === undefined ? (before.failure ?? 'no answer') : `HTTP ${before.status}`}) just before: the code likely used its missing result.`,
      tryThis: ['Handle the failure of that request (error state, retry) instead of using its result.'],
      confidence:
        known?.id === 'null_access' || known?.id === 'json_parse' || known?.id === 'network'
          ? 'high'
          : 'medium',
    },
    known === undefined
      ? {
          id: 'application_bug',
          title: "An exception in the application's code",
          why: `${name}${message === '' ? '' : `: ${message}`}. The frames show where it was thrown.`,
          tryThis: ['Open the top frame of the stack (upload source maps to see the original code).'],
          confidence: 'low' as const,
        }
      : {
          ...known.cause,
          confidence: known.id === 'resize_observer' || known.id === 'abort' ? 'medium' : 'high',
        },
  ]);
}

/**
 * The likely causes of a failed request, by its status or failure.
 *
 * @example
 * ```ts
 * requestCauses({ status: 502 })[0].id; // 'server_error'
 * ```
 */
export function requestCauses(request: { status?: number; failure?: string }): Cause[] {
  const { status, failure } = request;
  if (failure === 'timeout')
    return [
      {
        id: 'slow_backend',
        title: 'The server did not answer in time',
        why: 'The request timed out: a slow endpoint or a lost connection.',
        tryThis: ["Look at the endpoint's latency (its traces, when the request carried a trace id)."],
        confidence: 'high',
      },
    ];
  if (failure === 'abort')
    return [
      {
        id: 'aborted',
        title: 'The request was cancelled',
        why: 'The page aborted it (navigation, a newer request): often harmless.',
        tryThis: ['Nothing, unless the abort was not intended.'],
        confidence: 'medium',
      },
    ];
  if (status === undefined)
    return [
      {
        id: 'network_failure',
        title: 'No HTTP answer',
        why: 'Offline, DNS, a CORS refusal or a blocked request: fetch saw no response.',
        tryThis: ["Check the CORS headers of the API for this origin and the person's connectivity."],
        confidence: 'high',
      },
    ];
  if (status === 401 || status === 403)
    return [
      {
        id: 'auth_expired',
        title: 'The session or permission was refused',
        why: `HTTP ${status}: the person's session expired or lacks the right.`,
        tryThis: [
          'Refresh the session token before it expires, and send the person to sign in instead of failing silently.',
        ],
        confidence: 'high',
      },
    ];
  if (status === 404)
    return [
      {
        id: 'missing_resource',
        title: 'The resource does not exist',
        why: 'HTTP 404: a wrong URL, a deleted item or a route that changed with a deploy.',
        tryThis: ['Check the URL the page built and whether the item was deleted.'],
        confidence: 'high',
      },
    ];
  if (status === 429)
    return [
      {
        id: 'rate_limited',
        title: 'Rate limited',
        why: 'HTTP 429: too many requests.',
        tryThis: ['Honour Retry-After and debounce the requests the page repeats.'],
        confidence: 'high',
      },
    ];
  if (status >= 500)
    return [
      {
        id: 'server_error',
        title: 'The server failed',
        why: `HTTP ${status}: an error on the server${status === 502 || status === 503 || status === 504 ? ' or the gateway in front of it' : ''}.`,
        tryThis: ["Look at the server's logs and traces for this request (its trace id links them)."],
        confidence: 'high',
      },
    ];
  return [
    {
      id: 'client_request',
      title: 'The server refused the request',
      why: `HTTP ${status}: the request was not valid for the server.`,
      tryThis: ['Compare what the page sent with what the endpoint expects.'],
      confidence: 'medium',
    },
  ];
}

/** The causes of the click and vital problems a session shows. */
export const INTERACTION_CAUSES: Record<'rage_click' | 'dead_click', Cause[]> = {
  rage_click: [
    {
      id: 'slow_or_no_feedback',
      title: 'The element did not answer fast enough',
      why: 'The person clicked the same place again and again within a second: nothing visible happened, or too slowly.',
      tryThis: [
        'Show feedback at once (a pressed or loading state) and disable the control while it works.',
        'Check for an error or a failed request right after the first click.',
      ],
      confidence: 'high',
    },
  ],
  dead_click: [
    {
      id: 'looks_clickable',
      title: 'Something that looks clickable does nothing',
      why: 'No change of the page followed the click within a second.',
      tryThis: [
        'Make it work, or stop it looking like a control; check its handler is attached (an error may have stopped it).',
      ],
      confidence: 'medium',
    },
  ],
};

/** The causes of a poor web vital. */
export function vitalCauses(name: string): Cause[] {
  switch (name) {
    case 'LCP':
      return [
        {
          id: 'slow_largest_paint',
          title: 'The main content appeared late',
          why: 'The largest element (a hero image, a heading block) painted late: a slow server answer, render-blocking resources or a large image.',
          tryThis: [
            'Preload the LCP image, serve it sized and compressed, and cut render-blocking CSS and scripts.',
          ],
          confidence: 'medium',
        },
      ];
    case 'INP':
      return [
        {
          id: 'long_tasks',
          title: 'The page was busy when the person interacted',
          why: 'A long task on the main thread delayed the next paint after an interaction.',
          tryThis: [
            'Break up long handlers (yield to the main thread), and defer work that does not change what is shown.',
          ],
          confidence: 'medium',
        },
      ];
    case 'CLS':
      return [
        {
          id: 'layout_shift',
          title: 'Content moved while the page was used',
          why: 'Elements shifted: images without dimensions, content injected above, late web fonts.',
          tryThis: [
            'Reserve space for images, embeds and ads; avoid inserting content above what is on screen.',
          ],
          confidence: 'medium',
        },
      ];
    default:
      return [
        {
          id: 'slow_response',
          title: 'The server or the network was slow',
          why: `${name} was poor: the first byte or the first paint came late.`,
          tryThis: ["Look at the server's response time and caching (a CDN) for the page."],
          confidence: 'low',
        },
      ];
  }
}
