import { defineConfig } from 'vitest/config';

// Tests import workspace packages through the `@svc/source` export condition, so they run
// against the TypeScript sources and need no build.
const conditions = ['@svc/source', 'module', 'node', 'import', 'default'];

export default defineConfig({
  resolve: { conditions },
  ssr: { resolve: { conditions, externalConditions: ['@svc/source'] } },
  test: {
    projects: ['packages/*', 'servers/*', 'examples/*'].map((glob) => ({
      extends: true as const,
      test: { name: glob.split('/')[0], include: [`${glob}/src/**/*.test.ts`, `${glob}/test/**/*.test.ts`] },
    })),
    allowOnly: false,
    passWithNoTests: false,
  },
});
