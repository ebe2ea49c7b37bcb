import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

// The dashboard is served by the API server on its own origin (servers/api, SVC_APP_URL), under
// a strict Content-Security-Policy: no inline script or style, no eval. Vite's production build
// emits hashed files under assets/ and one index.html referencing them.
export default defineConfig({
  plugins: [react()],
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    // No inline module preload polyfill: it would be an inline script the CSP refuses.
    modulePreload: { polyfill: false },
    assetsInlineLimit: 0,
    sourcemap: true,
  },
});
