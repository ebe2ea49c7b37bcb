import { describe, expect, it } from 'vitest';
import { bundleSize, WHOLE_MAIN_ENTRY } from '../scripts/bundle-size.ts';

/** The min+gzip budget of the whole main entry (with @svc/quality-score), ~20 % over the README figure. */
const BUDGET_GZIP_BYTES = 7000;

describe('bundle size of the main entry (esbuild, ESM, minified, gzip -9)', () => {
  it(`stays under ${BUDGET_GZIP_BYTES} bytes and imports no zod`, async () => {
    const size = await bundleSize(WHOLE_MAIN_ENTRY);
    expect(size.gzipBytes).toBeLessThanOrEqual(BUDGET_GZIP_BYTES);
    expect(size.inputs.some((input) => input.includes('zod'))).toBe(false);
    expect(size.code).not.toMatch(/zod/i);
    // quality-score is bundled in (the SDK bundles it), so the number is what the SDK pays.
    expect(size.inputs.some((input) => input.includes('quality-score'))).toBe(true);
  });

  it('is tree-shakeable: the trigger names alone leave the engine and the score out', async () => {
    const size = await bundleSize("export { triggerName } from '@svc/detectors';");
    expect(size.inputs.some((input) => input.includes('quality-score'))).toBe(false);
    expect(size.gzipBytes).toBeLessThan(300);
  });

  it('the thresholds-schema entry is where zod lives', async () => {
    const size = await bundleSize("export * from '@svc/detectors/thresholds-schema';");
    expect(size.inputs.some((input) => input.includes('zod'))).toBe(true);
  });
});
