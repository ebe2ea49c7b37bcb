import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

// The layout rules of servers/api/README.md (Layout) are Biome `noRestrictedImports` overrides
// in the repository's biome.json. This runs the real Biome with that configuration over a small
// tree laid out like servers/api/src, so a rule that stopped matching (a renamed folder, a
// pattern Biome reads differently) fails here rather than silently letting imports through.

const run = promisify(execFile);
const biome = createRequire(import.meta.url).resolve('@biomejs/biome/bin/biome');
const repositoryConfig = new URL('../../../biome.json', import.meta.url);

/** Each probe file and its imports; `flagged` lists the imports the rules must refuse. */
const probes: Record<string, { imports: string[]; flagged: string[] }> = {
  'servers/api/src/platform/http/probe.ts': {
    imports: ['./errors.ts', '../database/schema.ts', '../../modules/calls/index.ts'],
    flagged: ['../../modules/calls/index.ts'],
  },
  'servers/api/src/modules/accounts/probe.ts': {
    imports: ['./passwords.ts', '../../platform/mail/index.ts', '../projects/index.ts', '../../app.ts'],
    flagged: ['../projects/index.ts', '../../app.ts'],
  },
  'servers/api/src/modules/orgs/probe.ts': {
    imports: [
      './organizations.ts',
      '../accounts/index.ts',
      '../accounts/repository.ts',
      '../projects/index.ts',
    ],
    flagged: ['../accounts/repository.ts', '../projects/index.ts'],
  },
  'servers/api/src/modules/passkeys/probe.ts': {
    imports: ['../accounts/index.ts', '../accounts/sign-in.ts', '../oauth/index.ts', '../orgs/index.ts'],
    flagged: ['../accounts/sign-in.ts', '../oauth/index.ts', '../orgs/index.ts'],
  },
  'servers/api/src/modules/oauth/probe.ts': {
    imports: ['../accounts/index.ts', '../passkeys/index.ts', '../orgs/index.ts', '../sso/index.ts'],
    flagged: ['../orgs/index.ts', '../sso/index.ts'],
  },
  'servers/api/src/modules/sso/probe.ts': {
    imports: [
      '../accounts/index.ts',
      '../oauth/index.ts',
      '../orgs/index.ts',
      '../orgs/roles.ts',
      '../projects/index.ts',
      '../../services.ts',
    ],
    flagged: ['../orgs/roles.ts', '../projects/index.ts', '../../services.ts'],
  },
  'servers/api/src/modules/projects/probe.ts': {
    imports: [
      './settings.ts',
      '../../platform/ids.ts',
      '../accounts/index.ts',
      '../accounts/repository.ts',
      '../orgs/index.ts',
      '../orgs/organizations.ts',
      '../calls/index.ts',
    ],
    flagged: ['../accounts/repository.ts', '../orgs/organizations.ts', '../calls/index.ts'],
  },
  'servers/api/src/modules/billing/probe.ts': {
    imports: ['../orgs/index.ts', '../projects/index.ts', '../usage/index.ts', '../sessions/index.ts'],
    flagged: ['../usage/index.ts', '../sessions/index.ts'],
  },
  'servers/api/src/modules/usage/probe.ts': {
    imports: ['../projects/index.ts', '../billing/index.ts', '../billing/license.ts', '../calls/index.ts'],
    flagged: ['../billing/license.ts', '../calls/index.ts'],
  },
  'servers/api/src/modules/sessions/probe.ts': {
    imports: [
      './views.ts',
      '../../platform/http/cursor.ts',
      '../accounts/index.ts',
      '../projects/index.ts',
      '../usage/index.ts',
      '../calls/index.ts',
      '../calls/call-queries.ts',
      '../calls/routes.ts',
      '../issues/index.ts',
      '../processing/index.ts',
      '../../app.ts',
    ],
    flagged: [
      '../calls/call-queries.ts',
      '../calls/routes.ts',
      '../issues/index.ts',
      '../processing/index.ts',
      '../../app.ts',
    ],
  },
  'servers/api/src/modules/issues/probe.ts': {
    imports: ['./clusters.ts', '../notifications/index.ts', '../insights/index.ts'],
    flagged: ['../insights/index.ts'],
  },
  'servers/api/src/modules/insights/probe.ts': {
    imports: [
      './route.ts',
      '../../platform/ids.ts',
      '../calls/index.ts',
      '../sessions/index.ts',
      '../notifications/index.ts',
      '../issues/index.ts',
      '../issues/clusters.ts',
      '../processing/index.ts',
      '../../app.ts',
    ],
    flagged: ['../issues/clusters.ts', '../processing/index.ts', '../../app.ts'],
  },
  'servers/api/src/modules/sourcemaps/probe.ts': {
    imports: ['./files.ts', '../issues/index.ts', '../issues/fingerprint.ts', '../processing/index.ts'],
    flagged: ['../issues/fingerprint.ts', '../processing/index.ts'],
  },
  'servers/api/src/modules/assets/probe.ts': {
    imports: [
      './fetch-asset.ts',
      '../sessions/index.ts',
      '../traces/index.ts',
      '../sessions/chunk-reader.ts',
      '../processing/index.ts',
    ],
    flagged: ['../sessions/chunk-reader.ts', '../processing/index.ts'],
  },
  'servers/api/src/modules/processing/probe.ts': {
    imports: [
      '../calls/index.ts',
      '../issues/index.ts',
      '../notifications/index.ts',
      '../insights/index.ts',
      '../assets/index.ts',
      '../issues/clusters.ts',
      '../insights/route.ts',
      '../assets/fetch-asset.ts',
    ],
    flagged: ['../issues/clusters.ts', '../insights/route.ts', '../assets/fetch-asset.ts'],
  },
  'servers/api/src/modules/search/probe.ts': {
    imports: ['../sessions/index.ts', '../calls/index.ts', '../processing/index.ts', '../analysis/index.ts'],
    flagged: ['../analysis/index.ts'],
  },
  'servers/api/src/modules/ai/probe.ts': {
    imports: [
      '../search/index.ts',
      '../analysis/index.ts',
      '../analysis/transcript.ts',
      '../reports/index.ts',
    ],
    flagged: ['../analysis/transcript.ts', '../reports/index.ts'],
  },
  'servers/api/src/modules/mcp/probe.ts': {
    imports: [
      '../search/index.ts',
      '../analysis/index.ts',
      '../ai/index.ts',
      '../reports/index.ts',
      '../../app.ts',
    ],
    flagged: ['../../app.ts'],
  },
  'servers/api/src/modules/privacy/probe.ts': {
    imports: [
      '../usage/index.ts',
      '../sessions/index.ts',
      '../issues/index.ts',
      '../mcp/index.ts',
      '../sessions/chunk-reader.ts',
      '../../cli.ts',
    ],
    flagged: ['../sessions/chunk-reader.ts', '../../cli.ts'],
  },
  // Tests compose what they need: the rules are for the code they test.
  'servers/api/src/modules/sessions/probe.test.ts': {
    imports: ['../issues/clusters.ts', '../../app.ts'],
    flagged: [],
  },
};

interface Diagnostic {
  category: string;
  location: { path: string; start: { line: number } };
}

let directory: string;
let flagged: Array<{ file: string; specifier: string }>;

beforeAll(async () => {
  directory = await mkdtemp(join(tmpdir(), 'svc-layout-'));
  const config = JSON.parse(await readFile(repositoryConfig, 'utf8'));
  // No git here, and no schema file next to the copy.
  delete config.vcs;
  delete config.$schema;
  await writeFile(join(directory, 'biome.json'), JSON.stringify(config));
  for (const [file, { imports }] of Object.entries(probes)) {
    const lines = imports.map((specifier, index) => `import * as m${index} from '${specifier}';`);
    lines.push(`export const all = [${imports.map((_, index) => `m${index}`).join(', ')}];`);
    await mkdir(dirname(join(directory, file)), { recursive: true });
    await writeFile(join(directory, file), `${lines.join('\n')}\n`);
  }
  const { stdout } = await run(
    process.execPath,
    [biome, 'lint', '--reporter=json', '--max-diagnostics=none', '.'],
    {
      cwd: directory,
    },
  ).catch((error: { stdout?: string }) => ({ stdout: error.stdout ?? '' }));
  const report = JSON.parse(stdout) as { diagnostics: Diagnostic[] };
  flagged = report.diagnostics
    .filter((diagnostic) => diagnostic.category === 'lint/style/noRestrictedImports')
    .map((diagnostic) => {
      const file = diagnostic.location.path.replaceAll('\\', '/');
      return { file, specifier: probes[file]?.imports[diagnostic.location.start.line - 1] ?? '?' };
    });
}, 60_000);

afterAll(async () => {
  await rm(directory, { recursive: true, force: true });
});

describe("biome.json's layout rules, run by Biome over a probe tree", () => {
  for (const [file, probe] of Object.entries(probes)) {
    it(`${file}: refuses ${probe.flagged.length === 0 ? 'nothing' : probe.flagged.join(', ')}`, () => {
      const refused = flagged.filter((entry) => entry.file === file).map((entry) => entry.specifier);
      expect(refused.sort()).toEqual([...probe.flagged].sort());
    });
  }
});
