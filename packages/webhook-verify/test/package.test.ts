/**
 * The package's shape: zero runtime dependencies, export conditions that give every runtime
 * the right build, and adapters that import the package by its own name (so each runtime picks
 * its build and there is one error class per process).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

const packageJson = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as {
  dependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  peerDependenciesMeta?: Record<string, { optional?: boolean }>;
  exports: Record<string, Record<string, unknown> | string>;
};

const webTarget = {
  import: { types: './dist/index.d.ts', default: './dist/web.js' },
  require: { types: './dist/index.d.cts', default: './dist/web.cjs' },
};
const nodeTarget = {
  import: { types: './dist/index.d.ts', default: './dist/index.js' },
  require: { types: './dist/index.d.cts', default: './dist/index.cjs' },
};

describe('package.json', () => {
  it('has zero runtime dependencies; fastify and express are optional peers', () => {
    expect(packageJson.dependencies ?? {}).toEqual({});
    for (const name of ['fastify', 'express']) {
      expect(packageJson.peerDependencies?.[name]).toBeDefined();
      expect(packageJson.peerDependenciesMeta?.[name]?.optional).toBe(true);
    }
  });

  it('resolves "." to the WebCrypto build on edge runtimes (before "node", which Deno and Bun also match) and to node:crypto on Node', () => {
    const root = packageJson.exports['.'] as Record<string, unknown>;
    expect(Object.keys(root)).toEqual([
      '@svc/source',
      'workerd',
      'worker',
      'browser',
      'deno',
      'bun',
      'edge-light',
      'node',
      'default',
    ]);
    expect(root['@svc/source']).toBe('./src/index.ts');
    for (const condition of ['workerd', 'worker', 'browser', 'deno', 'bun', 'edge-light', 'default']) {
      expect(root[condition], condition).toEqual(webTarget);
    }
    expect(root.node).toEqual(nodeTarget);
  });

  it('exports every adapter as a subpath with types for import and require', () => {
    for (const adapter of ['fastify', 'express', 'fetch', 'node']) {
      expect(packageJson.exports[`./${adapter}`]).toEqual({
        '@svc/source': `./src/adapters/${adapter}.ts`,
        import: { types: `./dist/${adapter}.d.ts`, default: `./dist/${adapter}.js` },
        require: { types: `./dist/${adapter}.d.cts`, default: `./dist/${adapter}.cjs` },
      });
    }
    expect(packageJson.exports['./vectors/signature-v1.json']).toBe('./vectors/signature-v1.json');
  });
});

describe('sources', () => {
  const adapters = readdirSync(new URL('../src/adapters/', import.meta.url)).filter(
    (name) => name.endsWith('.ts') && !name.endsWith('.test.ts'),
  );

  it.each(adapters)('adapter %s imports the package by name, never the builds by path', (name) => {
    const source = readFileSync(new URL(`../src/adapters/${name}`, import.meta.url), 'utf8');
    expect(source).not.toMatch(/from '\.\.\/(index|web|verify|errors|crypto-node|crypto-web)\.ts'/);
  });

  it('the WebCrypto build and the fetch adapter import nothing from node:', () => {
    for (const file of [
      'web.ts',
      'crypto-web.ts',
      'verify.ts',
      'header.ts',
      'payload.ts',
      'errors.ts',
      'types.ts',
      'common.ts',
      'adapters/fetch.ts',
      'adapters/shared.ts',
    ]) {
      const source = readFileSync(new URL(`../src/${file}`, import.meta.url), 'utf8');
      expect(source, file).not.toMatch(/from 'node:/);
    }
  });
});
