import { chmodSync, mkdirSync, statfsSync } from 'node:fs';
import { defineConfig } from 'vitest/config';

// Tests import workspace packages through the `@svc/source` export condition, so they run
// against the TypeScript sources and need no build. The condition is added to vite's defaults,
// not instead of them (replacing them makes require() of CommonJS packages pick ESM builds).
const source = '@svc/source';
// vite 8's client defaults. On the server side, resolve as Node does: without vite's `module`
// condition, which makes packages such as the AWS SDK resolve to builds meant for bundlers.
const clientConditions = ['module', 'browser', 'development|production'];
const serverConditions = ['node', 'development|production'];

function project(folder: string, options: Record<string, unknown> = {}) {
  return {
    extends: true as const,
    test: {
      name: folder,
      include: [`${folder}/*/src/**/*.test.ts`, `${folder}/*/test/**/*.test.ts`],
      ...options,
    },
  };
}

// The tests write PGlite and PostgreSQL data directories by the hundred (a 40 MB copy of the
// migrated template each time a test opens an embedded store). On the CI machine's disk a copy
// took 1-2.5 s, on tmpfs 0.1 s: temporary files go to /dev/shm when it is a tmpfs with room
// (2 GB free: a container's 64 MB /dev/shm is passed over), unless TMPDIR is set. Servers, CLIs
// and Chromium started by the tests inherit it.
function useMemoryTemporaryDirectory(): void {
  if (process.env.TMPDIR !== undefined && process.env.TMPDIR !== '') return;
  const directory = '/dev/shm/svc-tests';
  try {
    const { bavail, bsize } = statfsSync('/dev/shm');
    if (bavail * bsize < 2 * 1024 ** 3) return;
    // Sticky and open to all, as /tmp: PostgreSQL runs as its own user when the tests run as root.
    mkdirSync(directory, { recursive: true });
    chmodSync(directory, 0o1777);
  } catch {
    return;
  }
  process.env.TMPDIR = directory;
}
useMemoryTemporaryDirectory();

// Files run two at a time (one per core of the 2-core CI machine; vitest's default is one fewer
// than the cores): most of a file's time is waiting (PGlite's and PostgreSQL's I/O, Chromium,
// servers), and one file at a time left the second core idle in the gaps between files. Three at a
// time was measured slower (the Chromium files took twice as long) and made a real-call test miss
// its frame rate. Each file has its own databases, data directories and ports. The call scenarios
// shape the machine's network (nftables, tc on lo), so they run alone, after everything else.
const parallel = { maxWorkers: 2, sequence: { groupOrder: 0 } };
const alone = { maxWorkers: 1, sequence: { groupOrder: 1 } };

export default defineConfig({
  resolve: { conditions: [source, ...clientConditions] },
  ssr: { resolve: { conditions: [source, ...serverConditions] } },
  test: {
    projects: [
      // 30 s as the servers': a test that starts a CLI process waits for Node to start it, longer
      // than the default 5 s while the other worker loads the machine.
      project('packages', { ...parallel, testTimeout: 30_000 }),
      // The call scenarios start the server on a copy of the run's migrated PGlite template (one
      // per run, shared with the servers project).
      project('examples', { ...alone, globalSetup: ['servers/api/test/pglite-template.ts'] }),
      // The server's tests get one real PostgreSQL and one migrated PGlite template per run, and
      // the dashboard built once (its tests open it in Chromium).
      project('servers', {
        ...parallel,
        globalSetup: [
          'servers/api/test/global-setup.ts',
          'servers/api/test/pglite-template.ts',
          'servers/dashboard/test/global-setup.ts',
        ],
        // A dashboard test walks pages in Chromium beside another file's work: 60 s.
        testTimeout: 60_000,
        hookTimeout: 60_000,
        // expect.poll waits up to 1 s by default: too short for a page in Chromium while the
        // other test files load the machine (the dashboard's tests poll what the page shows).
        expect: { poll: { timeout: 10_000 } },
      }),
    ],
    // Under CI a JSON report lets .ci/run print a plain "N passed, N failed" line.
    reporters: process.env.CI ? ['default', 'json'] : ['default'],
    outputFile: { json: '.ci/out/vitest.json' },
    allowOnly: false,
    passWithNoTests: false,
  },
});
