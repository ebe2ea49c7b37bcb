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
    // Under CI a JSON report lets .ci/run print a plain "N passed, N failed" line.
    reporters: process.env.CI ? ['default', 'json'] : ['default'],
    outputFile: { json: '.ci/out/vitest.json' },
    allowOnly: false,
    passWithNoTests: false,
  },
});
