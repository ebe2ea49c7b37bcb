import { describe, expect, it } from 'vitest';
import { builds } from '../test/builds.ts';

const SECRET = 'whsec_verifyTestSecret0123456789abcdefgh';
const NEW_SECRET = 'whsec_verifyTestSecretNEW123456789abcdef';
const EVENT = { id: 'evt_01KAJBCH80ZPWJ3XE3230KFA1Z', type: 'notification.test', data: { title: 'Hi' } };
const BODY = JSON.stringify(EVENT);
const T = 1_763_700_000;
const NOW = T * 1000;

describe.each(builds)('%s build', (_name, build) => {
  const { signWebhook, verifyWebhook, WebhookVerificationError } = build;
  const sign = (body: string | Uint8Array = BODY, secrets: string | string[] = SECRET) =>
    signWebhook(body, secrets, { timestamp: T });
  const rejection = async (promise: Promise<unknown>) => {
    const error = await promise.then(
      () => {
        throw new Error('expected a rejection');
      },
      (caught: unknown) => caught,
    );
    return error as InstanceType<typeof WebhookVerificationError>;
  };

  describe('round trip', () => {
    it('parses only after verifying, and returns the event', async () => {
      await expect(verifyWebhook(BODY, await sign(), SECRET, { now: NOW })).resolves.toEqual(EVENT);
    });

    it('accepts every raw body form: string, Buffer, Uint8Array, ArrayBuffer, a DataView and an offset view', async () => {
      const header = await sign();
      const bytes = new TextEncoder().encode(BODY);
      const padded = new Uint8Array(bytes.length + 10);
      padded.set(bytes, 5);
      const forms = [
        BODY,
        Buffer.from(BODY),
        bytes,
        bytes.buffer.slice(0),
        new DataView(padded.buffer, 5, bytes.length),
        padded.subarray(5, 5 + bytes.length),
      ];
      for (const body of forms)
        await expect(verifyWebhook(body, header, SECRET, { now: NOW })).resolves.toEqual(EVENT);
    });

    it('signs the same header from a string and from its UTF-8 bytes', async () => {
      const body = JSON.stringify({ ...EVENT, data: { title: 'Ünïcödé 🎥' } });
      expect(await sign(body)).toBe(await sign(new TextEncoder().encode(body)));
    });

    it('signs lowercase hex, t first, one v1 per secret in order, no spaces', async () => {
      const header = await sign(BODY, [SECRET, NEW_SECRET]);
      expect(header).toMatch(/^t=1763700000,v1=[0-9a-f]{64},v1=[0-9a-f]{64}$/);
      const [, first, second] = header.split(',');
      expect(`t=${T},${first}`).toBe(await sign(BODY, SECRET));
      expect(`t=${T},${second}`).toBe(await sign(BODY, NEW_SECRET));
    });

    it('defaults the timestamp to now', async () => {
      const header = await signWebhook(BODY, SECRET);
      const t = Number(/^t=(\d+),/.exec(header)?.[1]);
      expect(Math.abs(t - Date.now() / 1000)).toBeLessThan(5);
      await expect(verifyWebhook(BODY, header, SECRET)).resolves.toEqual(EVENT);
    });
  });

  describe('rotation', () => {
    it('accepts a header with two v1 values with either secret, and a receiver with two secrets', async () => {
      const header = await sign(BODY, [SECRET, NEW_SECRET]);
      await expect(verifyWebhook(BODY, header, SECRET, { now: NOW })).resolves.toEqual(EVENT);
      await expect(verifyWebhook(BODY, header, [NEW_SECRET], { now: NOW })).resolves.toEqual(EVENT);
      await expect(
        verifyWebhook(BODY, await sign(BODY, NEW_SECRET), [SECRET, NEW_SECRET], { now: NOW }),
      ).resolves.toEqual(EVENT);
    });

    it('rejects when no secret matches any v1', async () => {
      const error = await rejection(
        verifyWebhook(BODY, await sign(BODY, [SECRET, NEW_SECRET]), 'whsec_other', { now: NOW }),
      );
      expect(error.code).toBe('no_matching_signature');
    });
  });

  describe('header forms', () => {
    it('reads a Headers object, a node header record (any case) and a string[]', async () => {
      const header = await sign();
      const [timestamp, signature] = header.split(',') as [string, string];
      const forms = [
        new Headers({ 'X-Service-Signature': header }),
        { 'x-service-signature': header, 'content-type': 'application/json' },
        { 'X-Service-Signature': header },
        { 'x-service-signature': [timestamp, signature] },
        [timestamp, signature],
        [header],
      ];
      for (const form of forms)
        await expect(verifyWebhook(BODY, form, SECRET, { now: NOW })).resolves.toEqual(EVENT);
    });

    it('missing in every form is missing_header', async () => {
      for (const form of [undefined, null, '', new Headers(), {}, { 'x-service-signature': undefined }, []]) {
        expect((await rejection(verifyWebhook(BODY, form, SECRET, { now: NOW }))).code).toBe(
          'missing_header',
        );
      }
    });

    it('an enormous header is malformed_header, refused by its size before it is parsed', async () => {
      // Bounded work whatever the size: the length (and the number of headers) is checked first,
      // as the message shows. (No timing assertion: the benchmark measures speed.)
      const huge = `t=${T},${'v1=aa,'.repeat(2_000_000)}`;
      const error = await rejection(verifyWebhook(BODY, huge, SECRET, { now: NOW }));
      expect(error.code).toBe('malformed_header');
      expect(error.message).toMatch(/characters long/);
      const many = Array.from({ length: 100_000 }, () => 'v1=aa');
      expect((await rejection(verifyWebhook(BODY, many, SECRET, { now: NOW }))).code).toBe(
        'malformed_header',
      );
    });
  });

  describe('timestamps', () => {
    it('applies the tolerance in both directions, inclusive', async () => {
      const header = await sign();
      for (const offset of [-300, 0, 300]) {
        await expect(verifyWebhook(BODY, header, SECRET, { now: NOW + offset * 1000 })).resolves.toEqual(
          EVENT,
        );
      }
      expect((await rejection(verifyWebhook(BODY, header, SECRET, { now: NOW + 301_000 }))).code).toBe(
        'timestamp_too_old',
      );
      expect((await rejection(verifyWebhook(BODY, header, SECRET, { now: NOW - 301_000 }))).code).toBe(
        'timestamp_too_new',
      );
    });

    it('accepts now as a Date, and Infinity turns the check off', async () => {
      const header = await sign();
      await expect(verifyWebhook(BODY, header, SECRET, { now: new Date(NOW + 200_000) })).resolves.toEqual(
        EVENT,
      );
      await expect(
        verifyWebhook(BODY, header, SECRET, { now: 0, toleranceSec: Number.POSITIVE_INFINITY }),
      ).resolves.toEqual(EVENT);
    });

    it('0 requires the same second (it does not turn the check off, unlike Stripe)', async () => {
      const header = await sign();
      await expect(verifyWebhook(BODY, header, SECRET, { now: NOW + 999, toleranceSec: 0 })).resolves.toEqual(
        EVENT,
      );
      expect(
        (await rejection(verifyWebhook(BODY, header, SECRET, { now: NOW + 1000, toleranceSec: 0 }))).code,
      ).toBe('timestamp_too_old');
    });

    it('says how to fix: the clock, or milliseconds instead of seconds', async () => {
      const old = await rejection(verifyWebhook(BODY, await sign(), SECRET, { now: NOW + 3_600_000 }));
      expect(old.message).toMatch(/3600 s old.*clock/);
      const milliseconds = await signWebhook(BODY, SECRET, { timestamp: T * 1000 });
      expect((await rejection(verifyWebhook(BODY, milliseconds, SECRET, { now: NOW }))).message).toMatch(
        /milliseconds/,
      );
    });
  });

  describe('messages that say how to fix the usual mistakes, never a secret', () => {
    it('a parsed object as rawBody is invalid_payload explaining the raw body, per framework', async () => {
      const error = await rejection(verifyWebhook(EVENT as never, await sign(), SECRET, { now: NOW }));
      expect(error.code).toBe('invalid_payload');
      expect(error.message).toMatch(/parsed object/);
      expect(error.message).toMatch(/raw request body/);
      for (const framework of ['Express', 'Fastify', 'Next.js', 'node:http'])
        expect(error.message).toContain(framework);
      for (const value of [undefined, null, 42]) {
        expect(
          (await rejection(verifyWebhook(value as never, await sign(), SECRET, { now: NOW }))).code,
        ).toBe('invalid_payload');
      }
    });

    it('a secret with whitespace or without whsec_ is hinted at, without printing it', async () => {
      const secret = `${SECRET}\n`;
      const error = await rejection(verifyWebhook(BODY, await sign(), secret, { now: NOW }));
      expect(error.code).toBe('no_matching_signature');
      expect(error.message).toMatch(/whitespace/);
      expect(error.message).toMatch(/raw request body/);
      expect(error.message).not.toContain(SECRET.slice(6));
      const unprefixed = await rejection(
        verifyWebhook(BODY, await sign(), ['whsec_ok_but_wrong', 'plainsecret'], { now: NOW }),
      );
      expect(unprefixed.message).toMatch(/secrets\[1\] does not start with whsec_/);
      expect(unprefixed.message).not.toContain('plainsecret');
    });

    it('uppercase hex is hinted at (it never matches, as with Stripe)', async () => {
      const header = (await sign()).toUpperCase().replace('T=', 't=').replace('V1=', 'v1=');
      const error = await rejection(verifyWebhook(BODY, header, SECRET, { now: NOW }));
      expect(error.code).toBe('no_matching_signature');
      expect(error.message).toMatch(/lowercase hex/);
    });

    it('no message of any rejection contains a secret', async () => {
      const secrets = [`  ${SECRET}  `, 'hunter2-not-whsec'];
      const header = await sign();
      const notJson = await sign('not json', secrets);
      const signedWithBoth = await sign(BODY, secrets);
      const attempts = [
        () => verifyWebhook(BODY, header, secrets, { now: NOW }),
        () => verifyWebhook(BODY, 'garbage', secrets, { now: NOW }),
        () => verifyWebhook(BODY, null, secrets, { now: NOW }),
        () => verifyWebhook({} as never, header, secrets, { now: NOW }),
        () => verifyWebhook('not json', notJson, secrets, { now: NOW }),
        () => verifyWebhook(BODY, signedWithBoth, secrets, { now: 0 }),
      ];
      for (const attempt of attempts) {
        const error = await rejection(attempt());
        expect(WebhookVerificationError.isInstance(error)).toBe(true);
        expect(`${error.message} ${JSON.stringify(error)}`).not.toMatch(/verifyTestSecret|hunter2/);
      }
    });
  });

  describe('programming errors are TypeErrors', () => {
    it('no secret, an empty secret, a non-string secret', async () => {
      const header = await sign();
      await expect(verifyWebhook(BODY, header, [])).rejects.toThrow(/No webhook secret/);
      await expect(verifyWebhook(BODY, header, [])).rejects.toBeInstanceOf(TypeError);
      await expect(verifyWebhook(BODY, header, '')).rejects.toThrow(/empty string.*environment variable/);
      await expect(verifyWebhook(BODY, header, [SECRET, undefined as never])).rejects.toThrow(/secrets\[1\]/);
      await expect(verifyWebhook(BODY, header, undefined as never)).rejects.toBeInstanceOf(TypeError);
      await expect(signWebhook(BODY, [])).rejects.toBeInstanceOf(TypeError);
    });

    it('invalid options', async () => {
      const header = await sign();
      await expect(verifyWebhook(BODY, header, SECRET, { toleranceSec: -1 })).rejects.toBeInstanceOf(
        TypeError,
      );
      await expect(verifyWebhook(BODY, header, SECRET, { toleranceSec: Number.NaN })).rejects.toBeInstanceOf(
        TypeError,
      );
      await expect(verifyWebhook(BODY, header, SECRET, { now: new Date('nope') })).rejects.toBeInstanceOf(
        TypeError,
      );
      await expect(signWebhook(BODY, SECRET, { timestamp: 1.5 })).rejects.toBeInstanceOf(TypeError);
      await expect(signWebhook(BODY, SECRET, { timestamp: -1 })).rejects.toBeInstanceOf(TypeError);
      await expect(signWebhook({} as never, SECRET)).rejects.toBeInstanceOf(TypeError);
    });
  });

  describe('WebhookVerificationError', () => {
    it('has name, code, status and isInstance through a Symbol.for marker', async () => {
      const error = await rejection(verifyWebhook(BODY, null, SECRET));
      expect(error).toBeInstanceOf(WebhookVerificationError);
      expect(error).toMatchObject({ name: 'WebhookVerificationError', code: 'missing_header', status: 400 });
      // A copy from another install of the package: a different class with the same marker.
      const marker = Symbol.for('@svc/webhook-verify.WebhookVerificationError');
      expect(WebhookVerificationError.isInstance({ [marker]: true, code: 'missing_header' })).toBe(true);
      expect(WebhookVerificationError.isInstance(new Error('x'))).toBe(false);
      expect(WebhookVerificationError.isInstance(null)).toBe(false);
      expect(
        new WebhookVerificationError({ code: 'payload_too_large', message: 'x', cause: 1 }),
      ).toMatchObject({
        status: 413,
        cause: 1,
      });
    });
  });

  it('keeps working with more secrets than the key cache holds', async () => {
    for (let index = 0; index < 70; index++) {
      const secret = `whsec_cache_${index}`;
      await expect(verifyWebhook(BODY, await sign(BODY, secret), secret, { now: NOW })).resolves.toEqual(
        EVENT,
      );
    }
    await expect(
      verifyWebhook(BODY, await sign(BODY, 'whsec_cache_0'), 'whsec_cache_0', { now: NOW }),
    ).resolves.toEqual(EVENT);
  });
});

describe('both builds agree', () => {
  it('on the same header for the same input', async () => {
    const [[, node], [, web]] = builds as [(typeof builds)[number], (typeof builds)[number]];
    for (const body of ['', BODY, 'ünï 🎥', new Uint8Array([0, 255, 128])]) {
      expect(await web.signWebhook(body, [SECRET, NEW_SECRET], { timestamp: T })).toBe(
        await node.signWebhook(body, [SECRET, NEW_SECRET], { timestamp: T }),
      );
    }
  });
});
