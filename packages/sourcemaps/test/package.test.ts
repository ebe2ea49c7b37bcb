/** The package's shape: no runtime dependencies, one entry with a source condition, and the bin. */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

const packageJson = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as {
  dependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  exports: Record<string, unknown>;
  bin: Record<string, string>;
  files: string[];
  engines: { node: string };
};

describe('package.json', () => {
  it('has no runtime dependency: Node built-ins only (fetch, FormData, Blob, node:crypto)', () => {
    expect(packageJson.dependencies ?? {}).toEqual({});
    expect(packageJson.peerDependencies ?? {}).toEqual({});
    expect(packageJson.engines.node).toBe('>=20');
  });

  it('exports the sources under @svc/source first, and builds with types for import and require', () => {
    expect(packageJson.exports['.']).toEqual({
      '@svc/source': './src/index.ts',
      import: { types: './dist/index.d.ts', default: './dist/index.js' },
      require: { types: './dist/index.d.cts', default: './dist/index.cjs' },
    });
  });

  it('has the bin svc-sourcemaps: a committed shim with a shebang that runs the built CLI', () => {
    expect(packageJson.bin).toEqual({ 'svc-sourcemaps': './bin/svc-sourcemaps.js' });
    const shim = readFileSync(new URL('../bin/svc-sourcemaps.js', import.meta.url), 'utf8');
    expect(shim.startsWith('#!/usr/bin/env node\n')).toBe(true);
    expect(shim).toContain("import '../dist/cli.js';");
    expect(packageJson.files).toContain('bin');
  });
});
