/**
 * Byte-for-byte compatibility with Stripe's webhook signature scheme, checked against the real
 * `stripe` package (dev dependency): headers it generates verify here, headers signed here
 * verify with its `constructEvent`, and the documented differences are pinned.
 */
import Stripe from 'stripe';
import { describe, expect, it } from 'vitest';
import { builds } from './builds.ts';

const stripe = new Stripe('sk_test_interop');
const SECRET = 'whsec_stripeInteropSecret0123456789abcdef';
const NEW_SECRET = 'whsec_stripeInteropSecretNEW23456789abcde';
const EVENT = {
  id: 'evt_01KAJBCH80ZPWJ3XE3230KFA1Z',
  type: 'cluster.created',
  data: { title: 'Vidéo gelée 🎥', cluster: { id: 'cl_1', count24h: 4 } },
};
const BODY = JSON.stringify(EVENT);

function stripeHeader(payload: string, secret: string, timestamp?: number): string {
  return stripe.webhooks.generateTestHeaderString({
    payload,
    secret,
    ...(timestamp === undefined ? {} : { timestamp }),
  });
}

function stripeVerifies(
  payload: string | Buffer,
  header: string,
  secret: string,
  receivedAtMs?: number,
): boolean {
  try {
    stripe.webhooks.constructEvent(payload, header, secret, undefined, undefined, receivedAtMs);
    return true;
  } catch {
    return false;
  }
}

describe.each(builds)('%s build and Stripe', (_name, { signWebhook, verifyWebhook }) => {
  it("Stripe's generateTestHeaderString output verifies here", async () => {
    await expect(verifyWebhook(BODY, stripeHeader(BODY, SECRET), SECRET)).resolves.toEqual(EVENT);
    await expect(verifyWebhook(Buffer.from(BODY), stripeHeader(BODY, SECRET), SECRET)).resolves.toEqual(
      EVENT,
    );
  });

  it("our signWebhook output verifies with Stripe's constructEvent", async () => {
    const header = await signWebhook(BODY, SECRET);
    expect(stripe.webhooks.constructEvent(BODY, header, SECRET)).toEqual(EVENT);
    expect(stripe.webhooks.constructEvent(Buffer.from(BODY), header, SECRET)).toEqual(EVENT);
  });

  it('produces exactly the header Stripe generates for the same t, body and secret', async () => {
    const timestamp = 1_763_700_000;
    expect(await signWebhook(BODY, SECRET, { timestamp })).toBe(stripeHeader(BODY, SECRET, timestamp));
  });

  it('two v1 values after a rotation: Stripe accepts ours with either secret, we accept with either', async () => {
    const header = await signWebhook(BODY, [SECRET, NEW_SECRET]);
    expect(stripeVerifies(BODY, header, SECRET)).toBe(true);
    expect(stripeVerifies(BODY, header, NEW_SECRET)).toBe(true);
    await expect(verifyWebhook(BODY, header, NEW_SECRET)).resolves.toEqual(EVENT);
    // A Stripe-style header with two v1 values built from Stripe's own signatures.
    const timestamp = Math.floor(Date.now() / 1000);
    const first = stripeHeader(BODY, SECRET, timestamp);
    const second = stripeHeader(BODY, NEW_SECRET, timestamp).split(',')[1];
    await expect(verifyWebhook(BODY, `${first},${second}`, [NEW_SECRET])).resolves.toEqual(EVENT);
  });

  it('a tampered body is rejected by both', async () => {
    const header = await signWebhook(BODY, SECRET);
    const tampered = BODY.replace('gelée', 'gelee');
    expect(stripeVerifies(tampered, header, SECRET)).toBe(false);
    await expect(verifyWebhook(tampered, header, SECRET)).rejects.toMatchObject({
      code: 'no_matching_signature',
    });
  });

  it('an old timestamp is rejected by both', async () => {
    const timestamp = Math.floor(Date.now() / 1000) - 301;
    const header = stripeHeader(BODY, SECRET, timestamp);
    expect(stripeVerifies(BODY, header, SECRET)).toBe(false);
    await expect(verifyWebhook(BODY, header, SECRET)).rejects.toMatchObject({ code: 'timestamp_too_old' });
  });

  it('a future timestamp: rejected here (PROTOCOL.md §6: either direction); Stripe only checks the past', async () => {
    const timestamp = Math.floor(Date.now() / 1000) + 3600;
    const header = stripeHeader(BODY, SECRET, timestamp);
    expect(stripeVerifies(BODY, header, SECRET)).toBe(true);
    await expect(verifyWebhook(BODY, header, SECRET)).rejects.toMatchObject({ code: 'timestamp_too_new' });
  });

  it('uppercase hex is rejected by both (exact comparison of lowercase hex)', async () => {
    const header = stripeHeader(BODY, SECRET);
    const upper = header.replace(/v1=([0-9a-f]+)/, (_match, hex: string) => `v1=${hex.toUpperCase()}`);
    expect(stripeVerifies(BODY, upper, SECRET)).toBe(false);
    await expect(verifyWebhook(BODY, upper, SECRET)).rejects.toMatchObject({ code: 'no_matching_signature' });
  });

  it('missing parts are rejected by both', async () => {
    const header = stripeHeader(BODY, SECRET);
    const [timestamp, signature] = header.split(',') as [string, string];
    for (const broken of [timestamp, signature, '']) {
      expect(stripeVerifies(BODY, broken, SECRET)).toBe(false);
      await expect(verifyWebhook(BODY, broken, SECRET)).rejects.toMatchObject({
        code: broken === '' ? 'missing_header' : 'malformed_header',
      });
    }
  });

  it('t=123abc: malformed here; Stripe reads parseInt("123abc") = 123 (stricter here)', async () => {
    const timestamp = Math.floor(Date.now() / 1000);
    const signature = stripeHeader(BODY, SECRET, timestamp).split(',')[1];
    const header = `t=${timestamp}abc,${signature}`;
    expect(stripeVerifies(BODY, header, SECRET)).toBe(true);
    await expect(verifyWebhook(BODY, header, SECRET)).rejects.toMatchObject({ code: 'malformed_header' });
  });

  it('spaces after commas: tolerated here (PROTOCOL.md §6); Stripe ignores the spaced part', async () => {
    const header = stripeHeader(BODY, SECRET).replace(',', ', ');
    expect(stripeVerifies(BODY, header, SECRET)).toBe(false);
    await expect(verifyWebhook(BODY, header, SECRET)).resolves.toEqual(EVENT);
  });

  it('duplicated t: malformed here; Stripe takes the last one', async () => {
    const timestamp = Math.floor(Date.now() / 1000);
    const header = `t=1,${stripeHeader(BODY, SECRET, timestamp)}`;
    expect(stripeVerifies(BODY, header, SECRET)).toBe(true);
    await expect(verifyWebhook(BODY, header, SECRET)).rejects.toMatchObject({ code: 'malformed_header' });
  });

  it('an enormous header: malformed here before any crypto; Stripe splits it all and fails', async () => {
    const header = `${stripeHeader(BODY, SECRET)},${'v0=x,'.repeat(50_000)}`;
    expect(stripeVerifies(BODY, `${'x'.repeat(20_000)}`, SECRET)).toBe(false);
    await expect(verifyWebhook(BODY, header, SECRET)).rejects.toMatchObject({ code: 'malformed_header' });
  });

  it('the secret is the whole whsec_ string for both (not base64-decoded)', async () => {
    const secret = 'whsec_dGhpcyBpcyBiYXNlNjQ=';
    const header = await signWebhook(BODY, secret);
    expect(stripeVerifies(BODY, header, secret)).toBe(true);
    await expect(verifyWebhook(BODY, stripeHeader(BODY, secret), secret)).resolves.toEqual(EVENT);
  });
});
