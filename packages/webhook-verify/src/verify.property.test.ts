import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { builds } from '../test/builds.ts';

const T = 1_763_700_000;
const options = { now: T * 1000 };
const eventArbitrary = fc.record({
  id: fc.string().map((suffix) => `evt_${suffix}`),
  type: fc.string({ minLength: 1 }),
  data: fc.dictionary(fc.string(), fc.jsonValue()),
});
const secretArbitrary = fc.string({ minLength: 1, unit: 'grapheme' });

describe.each(builds)(
  '%s build: properties',
  (_name, { signWebhook, verifyWebhook, WebhookVerificationError }) => {
    it('sign then verify returns the event, for any event and any secret(s)', async () => {
      await fc.assert(
        fc.asyncProperty(
          eventArbitrary,
          fc.array(secretArbitrary, { minLength: 1, maxLength: 3 }),
          async (event, secrets) => {
            const body = JSON.stringify(event);
            const header = await signWebhook(body, secrets, { timestamp: T });
            expect(await verifyWebhook(body, header, secrets.at(-1) ?? '', options)).toEqual(
              JSON.parse(body),
            );
          },
        ),
        { numRuns: 100 },
      );
    });

    it('any change of one byte of the body is no_matching_signature', async () => {
      await fc.assert(
        fc.asyncProperty(
          fc.uint8Array({ minLength: 1, maxLength: 512 }),
          fc.nat(),
          fc.integer({ min: 1, max: 255 }),
          async (body, position, delta) => {
            const header = await signWebhook(body, 'whsec_property', { timestamp: T });
            const tampered = body.slice();
            const index = position % body.length;
            tampered[index] = ((tampered[index] ?? 0) + delta) % 256;
            await expect(verifyWebhook(tampered, header, 'whsec_property', options)).rejects.toMatchObject({
              code: 'no_matching_signature',
            });
          },
        ),
        { numRuns: 100 },
      );
    });

    it('any header string is either accepted or rejected with a WebhookVerificationError, never anything else', async () => {
      const body = '{"id":"evt_1","type":"x","data":{}}';
      const valid = await signWebhook(body, 'whsec_property', { timestamp: T });
      const headerArbitrary = fc.oneof(
        fc.string({ maxLength: 200 }),
        fc
          .array(fc.constantFrom('t=', 'v1=', 'v0=', ',', ' ', '1763700000', 'abc', '=', valid), {
            maxLength: 20,
          })
          .map((parts) => parts.join('')),
      );
      await fc.assert(
        fc.asyncProperty(headerArbitrary, async (header) => {
          try {
            await verifyWebhook(body, header, 'whsec_property', options);
          } catch (error) {
            expect(WebhookVerificationError.isInstance(error)).toBe(true);
          }
        }),
        { numRuns: 300 },
      );
    });
  },
);
