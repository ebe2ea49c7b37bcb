import { defineConfig } from 'tsup';

export default defineConfig({
  entry: {
    // The Node build (node:crypto) and the WebCrypto build share one set of type declarations.
    index: 'src/index.ts',
    web: 'src/web.ts',
    fastify: 'src/adapters/fastify.ts',
    express: 'src/adapters/express.ts',
    fetch: 'src/adapters/fetch.ts',
    node: 'src/adapters/node.ts',
  },
  format: ['esm', 'cjs'],
  dts: {
    entry: {
      index: 'src/index.ts',
      fastify: 'src/adapters/fastify.ts',
      express: 'src/adapters/express.ts',
      fetch: 'src/adapters/fetch.ts',
      node: 'src/adapters/node.ts',
    },
  },
  clean: true,
  sourcemap: true,
  target: 'es2022',
  platform: 'neutral',
  removeNodeProtocol: false,
  // Adapters import the package by its own name, so each runtime picks its build through the
  // export conditions and there is one WebhookVerificationError class per process.
  external: ['@svc/webhook-verify', 'fastify', 'express', /^node:/],
});
