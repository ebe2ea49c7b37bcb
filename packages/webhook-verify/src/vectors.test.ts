import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  bodyOf,
  buildSignatureVectors,
  serializeSignatureVectors,
  type VectorFile,
} from '../scripts/signature-vectors.ts';
import { builds } from '../test/builds.ts';

const committedText = readFileSync(new URL('../vectors/signature-v1.json', import.meta.url), 'utf8');
const committed = JSON.parse(committedText) as VectorFile;

describe('vectors/signature-v1.json', () => {
  it('is what the generator produces today', () => {
    expect(
      committedText === serializeSignatureVectors(buildSignatureVectors()),
      'vectors/signature-v1.json is stale: run `pnpm --filter @svc/webhook-verify run build:vectors` and commit the result',
    ).toBe(true);
  });

  it('covers every error code, both directions of the clock and rotation', () => {
    expect(committed.version).toBe(1);
    const codes = new Set(
      committed.cases.flatMap((vector) => (vector.expected.ok ? [] : [vector.expected.code])),
    );
    expect([...codes].sort()).toEqual(
      [
        'invalid_payload',
        'malformed_header',
        'missing_header',
        'no_matching_signature',
        'timestamp_too_new',
        'timestamp_too_old',
      ].sort(),
    );
    expect(committed.cases.filter((vector) => vector.expected.ok).length).toBeGreaterThanOrEqual(15);
    expect(committed.cases.some((vector) => vector.secrets.length > 1 && vector.expected.ok)).toBe(true);
    expect(committed.sign.some((vector) => vector.secrets.length === 2)).toBe(true);
    expect(committed.cases.some((vector) => vector.bodyBase64 !== undefined)).toBe(true);
    expect(committed.cases.some((vector) => Array.isArray(vector.header))).toBe(true);
  });

  describe.each(builds)('%s build', (_name, build) => {
    it.each(committed.cases.map((vector) => [vector.name, vector] as const))(
      'verify: %s',
      async (_case, vector) => {
        const options = {
          now: vector.now * 1000,
          ...(vector.toleranceSec === undefined ? {} : { toleranceSec: vector.toleranceSec }),
        };
        const bodies: (string | Uint8Array)[] = [bodyOf(vector)];
        if (vector.body !== undefined) bodies.push(vector.body);
        for (const body of bodies) {
          const result = build.verifyWebhook(body, vector.header, vector.secrets, options);
          if (vector.expected.ok) {
            await expect(result).resolves.toEqual(vector.expected.event);
          } else {
            await expect(result).rejects.toMatchObject({
              name: 'WebhookVerificationError',
              code: vector.expected.code,
            });
          }
        }
      },
    );

    it.each(committed.sign.map((vector) => [vector.name, vector] as const))(
      'sign: %s',
      async (_case, vector) => {
        await expect(
          build.signWebhook(bodyOf(vector), vector.secrets, { timestamp: vector.timestamp }),
        ).resolves.toBe(vector.header);
        if (vector.body !== undefined) {
          await expect(
            build.signWebhook(vector.body, vector.secrets, { timestamp: vector.timestamp }),
          ).resolves.toBe(vector.header);
        }
      },
    );
  });
});
