/**
 * Bundles an entry of this package the way an application (the browser SDK) would: esbuild,
 * ESM, minified, tree-shaken, `@svc/quality-score` bundled in, and measures it gzipped (level 9).
 */
import { gzipSync } from 'node:zlib';
import { build } from 'esbuild';

export interface BundleSize {
  readonly minifiedBytes: number;
  readonly gzipBytes: number;
  readonly code: string;
  /** Every input file that contributed bytes to the bundle (after tree-shaking). */
  readonly inputs: readonly string[];
}

/** Bundles `source` (an ES module importing from `@svc/detectors`) and measures it. */
export async function bundleSize(source: string): Promise<BundleSize> {
  const result = await build({
    stdin: { contents: source, resolveDir: new URL('..', import.meta.url).pathname, loader: 'ts' },
    bundle: true,
    write: false,
    minify: true,
    format: 'esm',
    platform: 'neutral',
    target: 'es2022',
    conditions: ['@svc/source'],
    metafile: true,
    logLevel: 'silent',
  });
  const output = result.outputFiles[0];
  if (output === undefined) throw new Error('esbuild produced no output');
  return {
    minifiedBytes: output.contents.byteLength,
    gzipBytes: gzipSync(output.contents, { level: 9 }).byteLength,
    code: output.text,
    inputs: Object.entries(Object.values(result.metafile.outputs)[0]?.inputs ?? {})
      .filter(([, input]) => input.bytesInOutput > 0)
      .map(([path]) => path),
  };
}

/** The whole main entry: everything it exports, kept alive. */
export const WHOLE_MAIN_ENTRY = "export * from '@svc/detectors';";
