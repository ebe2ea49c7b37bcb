import { defineConfig } from 'tsup';

export default defineConfig([
  {
    entry: { index: 'src/index.ts' },
    format: ['esm', 'cjs'],
    dts: true,
    // Everything but the bin, which the second build writes at the same time.
    clean: ['!cli.js', '!cli.js.map'],
    sourcemap: true,
    target: 'node20',
    platform: 'node',
    removeNodeProtocol: false,
  },
  {
    // The bin: one ESM file (its `#!/usr/bin/env node` line is kept and it is made executable).
    entry: { cli: 'src/cli.ts' },
    format: ['esm'],
    sourcemap: true,
    target: 'node20',
    platform: 'node',
    removeNodeProtocol: false,
  },
]);
