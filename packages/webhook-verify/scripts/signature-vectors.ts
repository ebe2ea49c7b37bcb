/**
 * The known-answer vectors of `vectors/signature-v1.json`: the cases, and how the file is built
 * and serialised. `build-vectors.ts` writes the file; the tests check it is up to date and run
 * every case against both builds.
 *
 * Signatures here are computed independently of `src/` (plain `node:crypto` over the bytes of
 * `<t>.<body>`), and every expected outcome is written by hand: the file is a specification,
 * not a snapshot of the implementation.
 */
import { createHmac } from 'node:crypto';

export type VerifyExpectation =
  | { ok: true; event: unknown }
  | {
      ok: false;
      code:
        | 'missing_header'
        | 'malformed_header'
        | 'timestamp_too_old'
        | 'timestamp_too_new'
        | 'no_matching_signature'
        | 'invalid_payload';
    };

/** One `verifyWebhook` case: the body is `body` (UTF-8 text) or `bodyBase64` (any bytes). */
export interface VerifyCase {
  name: string;
  secrets: string[];
  /** The header value; an array is the header sent several times; `null` is no header. */
  header: string | string[] | null;
  body?: string;
  bodyBase64?: string;
  /** The receiver's clock, Unix seconds. */
  now: number;
  /** Absent: the default, 300. */
  toleranceSec?: number;
  expected: VerifyExpectation;
}

/** One `signWebhook` case: with these secrets, `t` and body, the header is exactly `header`. */
export interface SignCase {
  name: string;
  secrets: string[];
  timestamp: number;
  body?: string;
  bodyBase64?: string;
  header: string;
}

export interface VectorFile {
  version: 1;
  description: string;
  headerName: 'x-service-signature';
  cases: VerifyCase[];
  sign: SignCase[];
}

const description =
  'Known-answer vectors of the X-Service-Signature scheme v1 (PROTOCOL.md §6), byte-for-byte Stripe-compatible: ' +
  'header `t=<unix seconds>,v1=<hex>[,v1=<hex>]`; v1 = lowercase hex HMAC-SHA256 keyed with the UTF-8 bytes of the whole secret string ' +
  '(whsec_ prefix included, not decoded) over the bytes of `<t>.<raw body>`. ' +
  'cases: call verify(body, header, secrets, { now: now * 1000 ms, toleranceSec }) and expect the parsed event (ok) or the error code. ' +
  'The body is `body` (UTF-8) or `bodyBase64` (raw bytes). A header array is the header sent several times (join with ","); null is no header. ' +
  'sign: with `secrets`, `timestamp` and the body the header must be exactly `header` (one v1 per secret, in order). ' +
  'Rules: spaces after commas are tolerated; unknown schemes (v0, v2) are ignored; t must appear once, digits without a leading zero; ' +
  'at least one v1; at most 8192 characters, 32 parts and 8 v1 values (malformed_header, before any crypto); only lowercase hex matches; ' +
  'the signature is checked before the timestamp; |now - t| <= toleranceSec (default 300) in both directions; ' +
  'the verified body must be UTF-8 JSON of an object with a string id starting evt_, a string type and an object data.';

const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
const NEW_SECRET = 'whsec_Ay2zMZk1dC6bNMyo3Wn9mqkNGhJqVfSX';
const OTHER_SECRET = 'whsec_0000000000000000000000000000000000';
const NOW = 1_763_700_000; // 2025-11-21T04:40:00Z

function eventBody(overrides: Record<string, unknown> = {}): string {
  return JSON.stringify({
    id: 'evt_01KAJBCH80ZPWJ3XE3230KFA1Z',
    type: 'notification.test',
    version: '2026-11-01',
    createdAt: '2025-11-21T04:41:00Z',
    orgId: 'org_01KAJBCH808WMW5DRXRGE3RMW4',
    projectId: 'proj_01KAJBCH807W2TEEGMVMRKKEVW',
    data: {
      title: 'Test notification',
      summary: 'This is a test of the webhook channel.',
      severity: 'info',
      counts: {},
      links: {},
    },
    ...overrides,
  });
}

const BODY = eventBody();
const CLUSTER_BODY = eventBody({
  id: 'evt_01KAJBCH80GF0BDZMHRXCWSWV9',
  type: 'cluster.created',
  createdAt: '2025-11-21T04:40:12.345Z',
  data: {
    title: 'Video freezes on /calls/:id',
    summary: 'Inbound video froze for 3.1 s in 4 sessions since release web@2025.11.3.',
    severity: 'high',
    counts: { sessions: 4, users: 3 },
    route: '/calls/:id',
    release: 'web@2025.11.3',
    links: {
      replay: 'https://app.example.com/sessions/ses_01KAJBCH80XTQ0YDPAV81S476S?t=4700',
      issue: 'https://app.example.com/issues/cl_01KAJBCH80HJQR5CXGZJ7BYSNX',
    },
    cluster: {
      id: 'cl_01KAJBCH80HJQR5CXGZJ7BYSNX',
      kind: 'webrtc_freeze',
      title: 'Video freezes on /calls/:id',
      count24h: 4,
    },
  },
});
const UNICODE_BODY = eventBody({
  data: {
    title: 'Fehler in „Kasse“ — 日本語 🎥',
    summary: 'Ünïcödé: \u00e9 vs e\u0301, emoji 👩‍💻, RTL שלום, NUL-free',
    severity: 'low',
    counts: { sessions: 1 },
    links: {},
  },
});

function bytesOf(body: string | Uint8Array): Buffer {
  return typeof body === 'string' ? Buffer.from(body, 'utf8') : Buffer.from(body);
}

/** v1 for one secret: HMAC-SHA256(UTF-8 bytes of the secret, bytes of `<t>.` + body), lowercase hex. */
export function v1(secret: string, t: number | string, body: string | Uint8Array): string {
  return createHmac('sha256', Buffer.from(secret, 'utf8'))
    .update(Buffer.concat([Buffer.from(`${t}.`, 'ascii'), bytesOf(body)]))
    .digest('hex');
}

function header(t: number | string, ...signatures: string[]): string {
  return [`t=${t}`, ...signatures.map((signature) => `v1=${signature}`)].join(',');
}

const ok = (body: string): VerifyExpectation => ({ ok: true, event: JSON.parse(body) });
const fail = (code: Extract<VerifyExpectation, { ok: false }>['code']): VerifyExpectation => ({
  ok: false,
  code,
});

function verifyCases(): VerifyCase[] {
  const good = v1(SECRET, NOW, BODY);
  const base = { secrets: [SECRET], body: BODY, now: NOW };
  const invalidUtf8 = Buffer.from([0x7b, 0x22, 0x69, 0x64, 0x22, 0x3a, 0xff, 0xfe, 0x7d]); // {"id":\xff\xfe}
  const signed = (body: string, secrets = [SECRET]) => ({
    secrets,
    body,
    now: NOW,
    header: header(NOW, v1(secrets[0] ?? '', NOW, body)),
  });
  const signedBody = (body: string, secrets = [SECRET]): VerifyCase => ({
    ...signed(body, secrets),
    name: '',
    expected: ok(body),
  });
  const payloadCase = (name: string, body: string): VerifyCase => ({
    ...signed(body),
    name,
    expected: fail('invalid_payload'),
  });
  return [
    // Positive known answers.
    { ...base, name: 'one secret, one signature', header: header(NOW, good), expected: ok(BODY) },
    {
      ...signedBody(CLUSTER_BODY),
      name: 'cluster.created event (data.cluster, links.replay)',
    },
    { ...signedBody(UNICODE_BODY), name: 'unicode body (multi-byte UTF-8, combining marks, emoji ZWJ)' },
    {
      ...signedBody(`{\r\n  "id": "evt_1",\r\n  "type": "notification.test",\r\n  "data": {}\r\n}\r\n`),
      name: 'pretty-printed body with CRLF and a trailing newline: the bytes are signed as they are',
    },
    {
      ...signedBody(eventBody({ type: 'something.new_in_2027' })),
      name: 'unknown event type is returned as it is',
    },
    {
      ...signedBody(eventBody({ extra: { nested: [1, 2, 3] } })),
      name: 'unknown fields are returned as they are',
    },
    {
      ...base,
      name: 'rotation: header carries the old and the new secret, receiver has only the old one',
      header: header(NOW, good, v1(NEW_SECRET, NOW, BODY)),
      expected: ok(BODY),
    },
    {
      ...base,
      name: 'rotation: header carries the old and the new secret, receiver has only the new one',
      secrets: [NEW_SECRET],
      header: header(NOW, good, v1(NEW_SECRET, NOW, BODY)),
      expected: ok(BODY),
    },
    {
      ...base,
      name: 'rotation: receiver has both secrets, header signed with the new one only',
      secrets: [SECRET, NEW_SECRET],
      header: header(NOW, v1(NEW_SECRET, NOW, BODY)),
      expected: ok(BODY),
    },
    {
      ...base,
      name: 'rotation: the first v1 does not match, the second does',
      header: header(NOW, v1(OTHER_SECRET, NOW, BODY), good),
      expected: ok(BODY),
    },
    {
      ...base,
      name: 'spaces after commas are tolerated',
      header: `t=${NOW}, v1=${good}`,
      expected: ok(BODY),
    },
    {
      ...base,
      name: 'spaces and a tab after commas, two signatures',
      header: `t=${NOW},  v1=${v1(OTHER_SECRET, NOW, BODY)},\tv1=${good}`,
      expected: ok(BODY),
    },
    {
      ...base,
      name: 'whitespace around the whole value is tolerated',
      header: `  t=${NOW},v1=${good}  `,
      expected: ok(BODY),
    },
    {
      ...base,
      name: 'v1 before t',
      header: `v1=${good},t=${NOW}`,
      expected: ok(BODY),
    },
    {
      ...base,
      name: 'unknown schemes v0 and v2 are ignored',
      header: `t=${NOW},v0=${'ab'.repeat(32)},v1=${good},v2=future-scheme`,
      expected: ok(BODY),
    },
    {
      ...base,
      name: 'header sent twice (t and v1 in separate fields) is joined with a comma',
      header: [`t=${NOW}`, `v1=${good}`],
      expected: ok(BODY),
    },
    {
      ...base,
      name: 'timestamp exactly 300 s old is accepted',
      now: NOW + 300,
      header: header(NOW, good),
      expected: ok(BODY),
    },
    {
      ...base,
      name: 'timestamp exactly 300 s in the future is accepted',
      now: NOW - 300,
      header: header(NOW, good),
      expected: ok(BODY),
    },
    {
      ...base,
      name: 'toleranceSec 600 accepts 500 s old',
      now: NOW + 500,
      toleranceSec: 600,
      header: header(NOW, good),
      expected: ok(BODY),
    },
    {
      ...signedBody(BODY, ['not-a-whsec-secret']),
      name: 'a secret without the whsec_ prefix is used as given',
    },
    {
      ...signedBody(BODY, [`${SECRET}\n`]),
      name: 'a secret with a trailing newline on both sides: the whole string is the key',
    },
    {
      ...signedBody(BODY, ['whsec_ünïcödé-ключ']),
      name: 'a non-ASCII secret is keyed with its UTF-8 bytes',
    },

    // missing_header
    { ...base, name: 'no header', header: null, expected: fail('missing_header') },
    { ...base, name: 'empty header', header: '', expected: fail('missing_header') },
    { ...base, name: 'blank header', header: '   ', expected: fail('missing_header') },
    { ...base, name: 'header array with no value', header: [], expected: fail('missing_header') },

    // malformed_header
    { ...base, name: 'no t', header: `v1=${good}`, expected: fail('malformed_header') },
    { ...base, name: 'no v1', header: `t=${NOW}`, expected: fail('malformed_header') },
    {
      ...base,
      name: 'only an unknown scheme (v0)',
      header: `t=${NOW},v0=${good}`,
      expected: fail('malformed_header'),
    },
    { ...base, name: 't=123abc', header: `t=123abc,v1=${good}`, expected: fail('malformed_header') },
    { ...base, name: 't empty', header: `t=,v1=${good}`, expected: fail('malformed_header') },
    { ...base, name: 't negative', header: `t=-${NOW},v1=${good}`, expected: fail('malformed_header') },
    {
      ...base,
      name: 't with a fraction',
      header: `t=${NOW}.5,v1=${good}`,
      expected: fail('malformed_header'),
    },
    {
      ...base,
      name: 't with a leading zero',
      header: `t=0${NOW},v1=${good}`,
      expected: fail('malformed_header'),
    },
    {
      ...base,
      name: 't with a plus sign',
      header: `t=+${NOW},v1=${good}`,
      expected: fail('malformed_header'),
    },
    {
      ...base,
      name: 't in hex',
      header: `t=0x${NOW.toString(16)},v1=${good}`,
      expected: fail('malformed_header'),
    },
    {
      ...base,
      name: 't too long (16 digits)',
      header: `t=1${'0'.repeat(15)},v1=${good}`,
      expected: fail('malformed_header'),
    },
    {
      ...base,
      name: 'duplicated t (same value)',
      header: `t=${NOW},t=${NOW},v1=${good}`,
      expected: fail('malformed_header'),
    },
    {
      ...base,
      name: 'duplicated t (different values, as an attacker would send)',
      header: `t=${NOW},v1=${good},t=${NOW + 1000}`,
      expected: fail('malformed_header'),
    },
    {
      ...base,
      name: 'duplicated t across two header fields',
      header: [`t=${NOW},v1=${good}`, `t=${NOW}`],
      expected: fail('malformed_header'),
    },
    { ...base, name: 'uppercase key T', header: `T=${NOW},v1=${good}`, expected: fail('malformed_header') },
    {
      ...base,
      name: 'space before the equals sign',
      header: `t =${NOW},v1=${good}`,
      expected: fail('malformed_header'),
    },
    {
      ...base,
      name: 'space before a comma',
      header: `t=${NOW} ,v1=${good}`,
      expected: fail('malformed_header'),
    },
    { ...base, name: 'a part without =', header: `t=${NOW},v1,${good}`, expected: fail('malformed_header') },
    {
      ...base,
      name: 'an empty part (double comma)',
      header: `t=${NOW},,v1=${good}`,
      expected: fail('malformed_header'),
    },
    {
      ...base,
      name: 'semicolons instead of commas',
      header: `t=${NOW};v1=${good}`,
      expected: fail('malformed_header'),
    },
    {
      ...base,
      name: 'enormous header (9000 characters)',
      header: `t=${NOW},v1=${good},x=${'a'.repeat(9000)}`,
      expected: fail('malformed_header'),
    },
    {
      ...base,
      name: 'too many parts (33)',
      header: [`t=${NOW}`, `v1=${good}`, ...Array.from({ length: 31 }, (_, index) => `x${index}=1`)].join(
        ',',
      ),
      expected: fail('malformed_header'),
    },
    {
      ...base,
      name: 'too many v1 signatures (9), even with a valid one among them',
      header: header(NOW, ...Array.from({ length: 8 }, () => v1(OTHER_SECRET, NOW, BODY)), good),
      expected: fail('malformed_header'),
    },

    // no_matching_signature
    {
      ...base,
      name: 'tampered body (one character changed)',
      body: BODY.replace('Test notification', 'Test notificatioN'),
      header: header(NOW, good),
      expected: fail('no_matching_signature'),
    },
    {
      ...base,
      name: 're-serialised body (same JSON, different whitespace)',
      body: JSON.stringify(JSON.parse(BODY), null, 2),
      header: header(NOW, good),
      expected: fail('no_matching_signature'),
    },
    {
      ...base,
      name: 'body with a trailing newline added',
      body: `${BODY}\n`,
      header: header(NOW, good),
      expected: fail('no_matching_signature'),
    },
    {
      ...base,
      name: 'wrong secret',
      secrets: [OTHER_SECRET],
      header: header(NOW, good),
      expected: fail('no_matching_signature'),
    },
    {
      ...base,
      name: 'rotation: header carries two signatures, receiver has neither secret',
      secrets: [OTHER_SECRET],
      header: header(NOW, good, v1(NEW_SECRET, NOW, BODY)),
      expected: fail('no_matching_signature'),
    },
    {
      ...base,
      name: 'secret with a trailing newline on the receiver only',
      secrets: [`${SECRET}\n`],
      header: header(NOW, good),
      expected: fail('no_matching_signature'),
    },
    {
      ...base,
      name: 'secret without its whsec_ prefix on the receiver',
      secrets: [SECRET.slice('whsec_'.length)],
      header: header(NOW, good),
      expected: fail('no_matching_signature'),
    },
    {
      ...base,
      name: 'uppercase hex does not match (as with Stripe)',
      header: header(NOW, good.toUpperCase()),
      expected: fail('no_matching_signature'),
    },
    {
      ...base,
      name: 'truncated signature (63 hex digits)',
      header: header(NOW, good.slice(0, 63)),
      expected: fail('no_matching_signature'),
    },
    {
      ...base,
      name: 'signature with one more hex digit',
      header: header(NOW, `${good}0`),
      expected: fail('no_matching_signature'),
    },
    { ...base, name: 'empty v1', header: `t=${NOW},v1=`, expected: fail('no_matching_signature') },
    {
      ...base,
      name: 'signature of the body alone, without <t>.',
      header: header(NOW, createHmac('sha256', SECRET).update(BODY).digest('hex')),
      expected: fail('no_matching_signature'),
    },
    {
      ...base,
      name: 't changed after signing (replay with a fresh timestamp)',
      header: header(NOW + 1, good),
      now: NOW + 1,
      expected: fail('no_matching_signature'),
    },
    {
      ...base,
      name: 'HMAC-SHA1 instead of SHA-256',
      header: header(
        NOW,
        `${createHmac('sha1', SECRET).update(`${NOW}.${BODY}`).digest('hex')}${'0'.repeat(24)}`,
      ),
      expected: fail('no_matching_signature'),
    },
    {
      ...base,
      name: 'a secret base64-decoded instead of used as a string',
      header: header(
        NOW,
        createHmac('sha256', Buffer.from(SECRET.slice(6), 'base64'))
          .update(`${NOW}.${BODY}`)
          .digest('hex'),
      ),
      expected: fail('no_matching_signature'),
    },
    {
      ...base,
      name: 'tampered body and an old timestamp: the signature is checked first',
      body: `${BODY} `,
      now: NOW + 3600,
      header: header(NOW, good),
      expected: fail('no_matching_signature'),
    },

    // timestamp_too_old / timestamp_too_new
    {
      ...base,
      name: 'timestamp 301 s old',
      now: NOW + 301,
      header: header(NOW, good),
      expected: fail('timestamp_too_old'),
    },
    {
      ...base,
      name: 'timestamp a day old',
      now: NOW + 86_400,
      header: header(NOW, good),
      expected: fail('timestamp_too_old'),
    },
    {
      ...base,
      name: 'timestamp 301 s in the future',
      now: NOW - 301,
      header: header(NOW, good),
      expected: fail('timestamp_too_new'),
    },
    {
      ...base,
      name: 'toleranceSec 60 rejects 61 s old',
      now: NOW + 61,
      toleranceSec: 60,
      header: header(NOW, good),
      expected: fail('timestamp_too_old'),
    },
    {
      ...base,
      name: 'toleranceSec 60 rejects 61 s in the future',
      now: NOW - 61,
      toleranceSec: 60,
      header: header(NOW, good),
      expected: fail('timestamp_too_new'),
    },
    {
      ...signedBody(BODY),
      name: 't=0 (the epoch) is well formed but too old',
      header: header(0, v1(SECRET, 0, BODY)),
      expected: fail('timestamp_too_old'),
    },
    {
      ...signedBody(BODY),
      name: 't in milliseconds is far in the future',
      header: header(NOW * 1000, v1(SECRET, NOW * 1000, BODY)),
      expected: fail('timestamp_too_new'),
    },

    // invalid_payload (signed correctly)
    payloadCase('body is not JSON', 'id=evt_1&type=notification.test'),
    payloadCase('body is empty', ''),
    payloadCase('body is a JSON array', '[{"id":"evt_1","type":"notification.test","data":{}}]'),
    payloadCase('body is a JSON string', '"evt_1"'),
    payloadCase('body is JSON null', 'null'),
    payloadCase('no id', '{"type":"notification.test","data":{}}'),
    payloadCase('id without the evt_ prefix', '{"id":"dlv_1","type":"notification.test","data":{}}'),
    payloadCase('id is a number', '{"id":1,"type":"notification.test","data":{}}'),
    payloadCase('no type', '{"id":"evt_1","data":{}}'),
    payloadCase('type is not a string', '{"id":"evt_1","type":["cluster.created"],"data":{}}'),
    payloadCase('no data', '{"id":"evt_1","type":"notification.test"}'),
    payloadCase('data is null', '{"id":"evt_1","type":"notification.test","data":null}'),
    payloadCase('data is an array', '{"id":"evt_1","type":"notification.test","data":[]}'),
    payloadCase('truncated JSON', BODY.slice(0, -1)),
    payloadCase('a byte order mark before the JSON', `\ufeff${BODY}`),
    {
      ...base,
      name: 'body is not valid UTF-8 (signed as raw bytes)',
      body: undefined,
      bodyBase64: invalidUtf8.toString('base64'),
      header: header(NOW, v1(SECRET, NOW, invalidUtf8)),
      expected: fail('invalid_payload'),
    },
  ].map((vector) => {
    const { body, ...rest } = vector;
    return body === undefined ? rest : { ...rest, body };
  }) as VerifyCase[];
}

function signCases(): SignCase[] {
  const bytes = Buffer.from([0x00, 0xff, 0x80, 0x7f, 0x0a, 0x0d, 0xc3, 0x28]);
  return [
    {
      name: 'one secret',
      secrets: [SECRET],
      timestamp: NOW,
      body: BODY,
      header: header(NOW, v1(SECRET, NOW, BODY)),
    },
    {
      name: 'two secrets after a rotation: one v1 each, in order',
      secrets: [SECRET, NEW_SECRET],
      timestamp: NOW,
      body: BODY,
      header: header(NOW, v1(SECRET, NOW, BODY), v1(NEW_SECRET, NOW, BODY)),
    },
    {
      name: 'cluster event',
      secrets: [NEW_SECRET],
      timestamp: NOW + 17,
      body: CLUSTER_BODY,
      header: header(NOW + 17, v1(NEW_SECRET, NOW + 17, CLUSTER_BODY)),
    },
    {
      name: 'unicode body',
      secrets: [SECRET],
      timestamp: NOW,
      body: UNICODE_BODY,
      header: header(NOW, v1(SECRET, NOW, UNICODE_BODY)),
    },
    {
      name: 'empty body',
      secrets: [SECRET],
      timestamp: NOW,
      body: '',
      header: header(NOW, v1(SECRET, NOW, '')),
    },
    {
      name: 'arbitrary bytes (not UTF-8)',
      secrets: [SECRET],
      timestamp: NOW,
      bodyBase64: bytes.toString('base64'),
      header: header(NOW, v1(SECRET, NOW, bytes)),
    },
    { name: 't = 0', secrets: [SECRET], timestamp: 0, body: BODY, header: header(0, v1(SECRET, 0, BODY)) },
    {
      name: 'non-ASCII secret',
      secrets: ['whsec_ünïcödé-ключ'],
      timestamp: NOW,
      body: BODY,
      header: header(NOW, v1('whsec_ünïcödé-ключ', NOW, BODY)),
    },
  ];
}

export function buildSignatureVectors(): VectorFile {
  return {
    version: 1,
    description,
    headerName: 'x-service-signature',
    cases: verifyCases(),
    sign: signCases(),
  };
}

export function serializeSignatureVectors(file: VectorFile): string {
  return `${JSON.stringify(file, null, 2)}\n`;
}

/** The bytes of a case's body. */
export function bodyOf(vector: { body?: string; bodyBase64?: string }): Uint8Array {
  if (vector.bodyBase64 !== undefined) return new Uint8Array(Buffer.from(vector.bodyBase64, 'base64'));
  return new TextEncoder().encode(vector.body ?? '');
}
