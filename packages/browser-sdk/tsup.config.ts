import { readFileSync } from 'node:fs';
import { defineConfig } from 'tsup';

const { version } = JSON.parse(readFileSync(new URL('./package.json', import.meta.url), 'utf8')) as {
  version: string;
};

export default defineConfig({
  entry: { index: 'src/index.ts', 'webrtc/index': 'src/webrtc/index.ts' },
  format: ['esm', 'cjs'],
  dts: true,
  clean: true,
  sourcemap: true,
  target: 'es2022',
  platform: 'browser',
  // SDK_VERSION (src/index.ts) is the version being published, whatever `changeset version` set.
  define: { __SVC_SDK_VERSION__: JSON.stringify(version) },
});
