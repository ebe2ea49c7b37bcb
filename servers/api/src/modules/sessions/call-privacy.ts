import {
  callEventSchema,
  callSampleSchema,
  connectionInfoSchema,
  formatIssuePath,
  isCallEventName,
  sessionEventSchema,
  trackSampleSchema,
  unknownCallEventSchema,
} from '@svc/protocol';
import { REDACTED, redactSdp, scrubAddresses } from '@svc/protocol/redaction';

/**
 * The server's re-check of call data against the privacy table (PROTOCOL.md §3, the service
 * spec's "Privacy rules for call data"). The SDK enforces the table; this module makes sure a
 * client that does not (another SDK, a script) cannot get forbidden data stored either.
 *
 * Where such data can hide: the protocol's schemas strip unknown fields when they parse, but the
 * server stores the chunk's bytes as sent, so unknown fields of known call items, and whole
 * `call.event`s of unknown names (the SDK's own `sdp` event is one), reach storage untouched.
 * So the re-check looks at every field of every `call.event` and `call.sample`, at any depth,
 * known or not. Of other event types only `request` events are looked at: their URL keeps its
 * origin and path, never a query string or fragment (`request_query`), as the browser SDK sends
 * it; the rest is outside the call privacy table (rrweb content is masked by the SDK's
 * recording privacy).
 *
 * Pure: no I/O, never throws, never modifies its input.
 */

/** What the re-check removes, one name per row of the privacy table it enforces. */
export const PRIVACY_RULES = [
  'candidate_address',
  'ice_server',
  'sdp',
  'device_id',
  'data_channel_payload',
  'device_label',
  'request_query',
] as const;

/** One of {@link PRIVACY_RULES}. */
export type PrivacyRule = (typeof PRIVACY_RULES)[number];

/** Paths reported per rule at most (the count covers them all). */
export const MAX_REDACTED_PATHS = 10;

/**
 * What one rule removed from a chunk: how many values (`count`) and where, as accessor paths
 * into the chunk as sent (`events[4].errorText`; at most {@link MAX_REDACTED_PATHS}).
 */
export interface Redaction {
  rule: PrivacyRule;
  count: number;
  paths: string[];
}

/** The result of {@link recheckCallPrivacy}. */
export interface CallPrivacyResult {
  /** The events to store: the array passed in when nothing was removed, else a changed copy. */
  events: readonly unknown[];
  /** One entry per rule that removed something, in {@link PRIVACY_RULES} order; empty when none. */
  redacted: Redaction[];
  /** Whole events removed (their positions shifted): the chunk must be parsed again. */
  removedEvents: number;
}

export { REDACTED, redactSdp };

/**
 * The form of a `deviceId` (or `groupId`) the SDK sends: the first 8 bytes of
 * SHA-256(`<per-session salt>:<deviceId>`) as 16 lowercase hex digits. Anything else is taken for
 * the browser's own identifier (Chromium's are 64 hex digits, Firefox's base64) and dropped.
 */
const SALTED_HASH = /^[0-9a-f]{16}$/;

/** The call events that carry device labels (`label`, `labels`), which strict privacy mode leaves out. */
const DEVICE_LABEL_EVENTS: ReadonlySet<unknown> = new Set([
  'media_acquired',
  'device_inventory',
  'device_change',
]);

/** What the server keeps of a `data_channel` event: the channel's label and state, never its data. */
const DATA_CHANNEL_FIELDS = new Set(['t', 'type', 'pc', 'name', 'label', 'state']);

/**
 * Fields dropped whatever their value, by lower-cased name, at any depth of a call item: ICE
 * candidate addresses and ports, ICE credentials, ICE server URLs and credentials.
 */
const DROPPED_FIELDS: ReadonlyMap<string, PrivacyRule> = new Map([
  ['candidate', 'candidate_address'],
  ['address', 'candidate_address'],
  ['relatedaddress', 'candidate_address'],
  ['localaddress', 'candidate_address'],
  ['remoteaddress', 'candidate_address'],
  ['ip', 'candidate_address'],
  ['port', 'candidate_address'],
  ['relatedport', 'candidate_address'],
  ['usernamefragment', 'candidate_address'],
  ['url', 'ice_server'],
  ['urls', 'ice_server'],
  ['username', 'ice_server'],
  ['credential', 'ice_server'],
]);

/**
 * Field names of call items that the protocol defines and no rule drops by name (their string
 * values are still looked into): the one lookup most fields take. `deviceId` and `iceServers`
 * are defined too, but kept only for some values.
 */
const PROTOCOL_FIELDS: ReadonlySet<string> = new Set(
  [
    ...callEventSchema.options.flatMap((option) => Object.keys(option.shape)),
    ...Object.keys(callSampleSchema.shape),
    ...Object.keys(connectionInfoSchema.shape),
    ...Object.keys(trackSampleSchema.shape),
  ].filter((key) => key !== 'deviceId' && key !== 'iceServers'),
);

/**
 * Whether a string may hold an address, a URL, a candidate or SDP: it has a `:`, a line break, a
 * digit-dot-digit, `.local`, ` typ ` or starts `v=0` or `c=IN `. Without any of these it cannot,
 * and most strings of a call item (states, types, ids, codecs) are done after this one scan.
 */
function isSuspicious(text: string): boolean {
  const length = text.length;
  for (let index = 0; index < length; index += 1) {
    const code = text.charCodeAt(index);
    if (code === 58 /* : */ || code === 10 /* \n */ || code === 13 /* \r */) return true;
    if (code === 46 /* . */) {
      const before = text.charCodeAt(index - 1);
      const after = text.charCodeAt(index + 1);
      if (before >= 48 && before <= 57 && after >= 48 && after <= 57) return true;
      if ((after | 32) === 108 /* l */ && text.slice(index + 1, index + 6).toLowerCase() === 'local')
        return true;
    } else if (code === 32 /* space */ && index >= 3 && text.slice(index - 3, index).toLowerCase() === 'typ')
      return true;
  }
  return text.startsWith('v=0') || text.startsWith('c=IN ');
}
/** A session description, or lines of one: `v=0`, or a line that only SDP has and the table names. */
const SDP_TEXT = /^(?:v=0\r?$|a=ice-ufrag:|a=ice-pwd:|a=candidate:|a=remote-candidates:|c=IN )/im;
const CANDIDATE_TEXT = /(?:^|[\s"'])candidate:\S|\btyp (?:host|srflx|prflx|relay)\b/i;
const ICE_URL = /\b(?:stuns?|turns?):[^\s"'<>,;]+/gi;
const URL_TEXT = /\b[a-z][a-z\d+.-]*:\/\/[^\s"'<>,;]+/gi;
/** `host.name:port`: a server address without its scheme. */
const HOST_AND_PORT = /(?<![\w.-])(?:[a-z\d](?:[a-z\d-]*[a-z\d])?\.)+[a-z][a-z\d-]*:\d{1,5}(?!\w)/gi;

/** Called once per rule that removed something from one value. */
type OnRemoved = (rule: PrivacyRule) => void;

/** A string of a call item with what the table forbids removed (the same string when nothing). */
function redactText(text: string, strict: boolean, onRemoved: OnRemoved): string {
  if (!isSuspicious(text)) return text;
  if (SDP_TEXT.test(text)) {
    const redacted = strict ? REDACTED : redactSdp(text);
    if (redacted !== text) onRemoved('sdp');
    return redacted;
  }
  if (CANDIDATE_TEXT.test(text)) {
    onRemoved('candidate_address');
    return REDACTED;
  }
  const withoutServers = text
    .replace(ICE_URL, REDACTED)
    .replace(URL_TEXT, REDACTED)
    .replace(HOST_AND_PORT, REDACTED);
  if (withoutServers !== text) onRemoved('ice_server');
  const withoutAddresses = scrubAddresses(withoutServers);
  if (withoutAddresses !== withoutServers) onRemoved('candidate_address');
  return withoutAddresses;
}

/** The rule that removes a field whatever else it holds, or `undefined` when it may stay. */
function droppedFieldRule(key: string, value: unknown, strict: boolean): PrivacyRule | undefined {
  if (PROTOCOL_FIELDS.has(key)) return undefined;
  const name = key.toLowerCase();
  const rule = DROPPED_FIELDS.get(name);
  if (rule !== undefined) return rule;
  if (name === 'deviceid' || name === 'groupid')
    return typeof value === 'string' && SALTED_HASH.test(value) ? undefined : 'device_id';
  // `pc_created` counts them; a list (or anything but a count) is the servers themselves.
  if (name === 'iceservers')
    return Number.isInteger(value) && (value as number) >= 0 ? undefined : 'ice_server';
  if (name === 'sdp' && (strict || typeof value !== 'string')) return 'sdp';
  if (!isSuspicious(key)) return undefined;
  // A field whose name is itself an address or a URL goes with its value.
  let keyRule: PrivacyRule | undefined;
  redactText(key, strict, (found) => {
    keyRule ??= found;
  });
  return keyRule;
}

function setOwn(object: Record<string, unknown>, key: string, value: unknown): void {
  // `__proto__` from JSON.parse is an own property: assigning it would set the prototype instead.
  Object.defineProperty(object, key, { value, enumerable: true, writable: true, configurable: true });
}

/** Walks one call item, recording each removal with its path. */
class ItemRedactor {
  readonly found = new Map<PrivacyRule, Redaction>();
  readonly path: Array<string | number> = ['events', 0];
  private readonly onRemoved: OnRemoved = (rule) => this.record(rule);

  readonly strict: boolean;

  constructor(strict: boolean) {
    this.strict = strict;
  }

  record(rule: PrivacyRule): void {
    let redaction = this.found.get(rule);
    if (redaction === undefined) {
      redaction = { rule, count: 0, paths: [] };
      this.found.set(rule, redaction);
    }
    redaction.count += 1;
    if (redaction.paths.length < MAX_REDACTED_PATHS) redaction.paths.push(formatIssuePath(this.path));
  }

  value(value: unknown): unknown {
    if (typeof value === 'string') return redactText(value, this.strict, this.onRemoved);
    if (typeof value !== 'object' || value === null) return value;
    if (!Array.isArray(value)) return this.object(value as Record<string, unknown>, undefined);
    let copy: unknown[] | undefined;
    for (let index = 0; index < value.length; index += 1) {
      this.path.push(index);
      const next = this.value(value[index]);
      this.path.pop();
      if (next !== value[index]) {
        copy ??= value.slice();
        copy[index] = next;
      }
    }
    return copy ?? value;
  }

  object(
    object: Record<string, unknown>,
    keptFields: ReadonlySet<string> | undefined,
  ): Record<string, unknown> {
    let copy: Record<string, unknown> | undefined;
    // JSON.parse makes plain objects: `for...in` walks their own fields (and is the faster walk).
    for (const key in object) {
      const value = object[key];
      // Most fields of a sample: a protocol field holding a number or a boolean.
      if (
        typeof value !== 'string' &&
        typeof value !== 'object' &&
        PROTOCOL_FIELDS.has(key) &&
        keptFields === undefined
      )
        continue;
      this.path.push(key);
      const rule =
        keptFields !== undefined && !keptFields.has(key)
          ? 'data_channel_payload'
          : droppedFieldRule(key, value, this.strict);
      if (rule !== undefined) {
        this.record(rule);
        copy ??= { ...object };
        delete copy[key];
      } else {
        // Whatever an `sdp` field holds is a session description, `v=0` or not.
        const next =
          typeof value === 'string' && key.toLowerCase() === 'sdp' ? this.sdp(value) : this.value(value);
        if (next !== value) {
          copy ??= { ...object };
          setOwn(copy, key, next);
        }
      }
      this.path.pop();
    }
    return copy ?? object;
  }

  private sdp(text: string): string {
    const redacted = redactSdp(text);
    if (redacted !== text) this.record('sdp');
    return redacted;
  }
}

/** A device event without its labels (strict privacy mode), each removal recorded; else the event. */
function withoutDeviceLabels(
  event: Record<string, unknown>,
  redactor: ItemRedactor,
): Record<string, unknown> {
  if (event.type !== 'call.event' || !DEVICE_LABEL_EVENTS.has(event.name)) return event;
  let copy: Record<string, unknown> | undefined;
  for (const key of ['label', 'labels']) {
    if (!Object.hasOwn(event, key)) continue;
    redactor.path.push(key);
    redactor.record('device_label');
    redactor.path.pop();
    copy ??= { ...event };
    delete copy[key];
  }
  return copy ?? event;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Whether a redacted call item still validates as what it claimed to be. */
function stillValid(item: Record<string, unknown>): boolean {
  const unknownName = item.type === 'call.event' && !isCallEventName(item.name);
  return (unknownName ? unknownCallEventSchema : sessionEventSchema).safeParse(item).success;
}

/** `url` without its fragment, and without its query string but the parameters of `kept`. */
function requestUrl(url: string, kept: readonly string[]): string {
  const path = url.replace(/[?#].*$/s, '');
  if (kept.length === 0 || path.length === url.length) return path;
  const query = /\?([^#]*)/s.exec(url)?.[1] ?? '';
  const params = new URLSearchParams(query);
  const allowed = new URLSearchParams([...params].filter(([name]) => kept.includes(name))).toString();
  // In the form the browser SDK sends (URLSearchParams): its URLs come back unchanged.
  return allowed === '' ? path : `${path}?${allowed}`;
}

/**
 * Re-checks the `call.event` and `call.sample` items of a chunk's events (as sent: unknown
 * fields and unknown call events included) against the privacy table and removes what must
 * never be stored:
 *
 * - `candidate_address`: IP addresses, mDNS host names and ICE candidate strings in any string
 *   (a candidate string goes whole, an address becomes `[redacted]`); fields named `candidate`,
 *   `address`, `relatedAddress`, `localAddress`, `remoteAddress`, `ip`, `port`, `relatedPort`,
 *   `usernameFragment`.
 * - `ice_server`: `stun:`/`turn:` and other URLs and `host:port` server addresses in any string
 *   (an `ice_candidate_error`'s `errorText` included); fields named `url`, `urls`, `username`,
 *   `credential`; an `iceServers` that is not a count.
 * - `sdp`: session descriptions (an `sdp` field, or any string starting `v=0`) lose their
 *   `a=candidate`, `a=remote-candidates`, `c=`, `a=ice-ufrag` and `a=ice-pwd` lines, their
 *   `m=`/`a=rtcp:` ports and what the PII detectors find; in strict privacy mode every `sdp`
 *   call event is removed and any other SDP dropped.
 * - `device_id`: a `deviceId` or `groupId` that is not a salted hash (16 lowercase hex digits).
 * - `data_channel_payload`: a `data_channel` event keeps only `t`, `type`, `pc`, `name`, `label`
 *   and `state`.
 * - `device_label`: in strict privacy mode, the device labels of `media_acquired` (`label`),
 *   `device_inventory` and `device_change` (`labels`).
 *
 * A call item that no longer validates once redacted (a required field held an address) is
 * removed whole. Field names are compared case-insensitively. Copy on write: the chunk our SDK
 * sends comes back as the same array, after one cheap test per string.
 *
 * @example
 * ```ts
 * const { events, redacted } = recheckCallPrivacy(chunk.events, { strict: false });
 * if (redacted.length > 0) store(JSON.stringify({ ...chunk, events }));
 * ```
 */
export function recheckCallPrivacy(
  events: readonly unknown[],
  options: { strict: boolean; requestQueryParams?: readonly string[] },
): CallPrivacyResult {
  const keptParams = options.requestQueryParams ?? [];
  const redactor = new ItemRedactor(options.strict);
  let copy: unknown[] | undefined;
  let removedEvents = 0;
  for (let index = 0; index < events.length; index += 1) {
    const event = events[index];
    redactor.path[1] = index;
    if (isRecord(event) && event.type === 'request' && typeof event.url === 'string') {
      // A request's URL is kept to its origin and path, and the query parameters the project allows.
      const url = requestUrl(event.url, keptParams);
      if (url === event.url) continue;
      redactor.path.push('url');
      redactor.record('request_query');
      redactor.path.pop();
      copy ??= events.slice();
      copy[index] = { ...event, url };
      continue;
    }
    if (!isRecord(event) || (event.type !== 'call.event' && event.type !== 'call.sample')) continue;
    let next: Record<string, unknown> | undefined;
    if (options.strict && event.type === 'call.event' && event.name === 'sdp') {
      redactor.record('sdp');
    } else {
      const kept =
        event.type === 'call.event' && event.name === 'data_channel' ? DATA_CHANNEL_FIELDS : undefined;
      const unlabelled = options.strict ? withoutDeviceLabels(event, redactor) : event;
      next = redactor.object(unlabelled, kept);
      if (next === event) continue;
      if (!stillValid(next)) next = undefined;
    }
    copy ??= events.slice();
    if (next === undefined) removedEvents += 1;
    copy[index] = next;
  }
  const redacted = PRIVACY_RULES.flatMap((rule) => {
    const found = redactor.found.get(rule);
    return found === undefined ? [] : [found];
  });
  if (copy === undefined) return { events, redacted, removedEvents: 0 };
  return {
    events: removedEvents === 0 ? copy : copy.filter((event) => event !== undefined),
    redacted,
    removedEvents,
  };
}
