import { defineConfig } from 'tsup';

export default defineConfig({
  entry: { index: 'src/index.ts', 'webrtc/index': 'src/webrtc/index.ts' },
  format: ['esm', 'cjs'],
  dts: true,
  clean: true,
  sourcemap: true,
  target: 'es2022',
  platform: 'browser',
});
