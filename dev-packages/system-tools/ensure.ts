/**
 * Runs before the tests (`pnpm test`, `pnpm test:setup`, `.ci/run`): makes sure every system
 * program the tests start is installed. Missing ones are installed with apt-get when this runs
 * as root on Debian or Ubuntu; otherwise it stops at once with one line naming the command to
 * run. No test is skipped for a missing program: the tests never run without them.
 */

import { spawnSync } from 'node:child_process';
import { CHROMIUM_PATH, locate, missingTools, SYSTEM_TOOLS, type SystemTool } from './index.ts';

function stop(line: string): never {
  process.stderr.write(`\n${line}\n\n`);
  process.exit(1);
}

const packagesOf = (tools: readonly SystemTool[]) => tools.map((tool) => tool.aptPackage).join(' ');

/** Runs apt-get quietly; on failure prints what it said, then stops. */
function aptGet(args: string[]): void {
  const result = spawnSync('apt-get', ['-o', 'DPkg::Lock::Timeout=300', ...args], {
    env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
  if (result.status !== 0) {
    const output = `${result.stdout ?? ''}${result.stderr ?? ''}`.trim().split('\n').slice(-15).join('\n');
    process.stderr.write(`${output}\n`);
    stop(`The tests need system packages and apt-get failed: run  apt-get install -y ${args.at(-1)}`);
  }
}

const isRoot = process.getuid?.() === 0;
let missing = missingTools();

if (process.env.SVC_CHROMIUM && missing.some((tool) => tool.command === CHROMIUM_PATH)) {
  stop(`SVC_CHROMIUM is ${CHROMIUM_PATH}, which is not an executable Chromium: fix it or unset it.`);
}

if (missing.length > 0) {
  const names = packagesOf(missing);
  if (!isRoot || process.platform !== 'linux' || !locate('apt-get')) {
    stop(
      `The tests need ${names} (${missing.map((tool) => tool.usedBy).join('; ')}). ` +
        `Install them, then run the tests again:  sudo apt-get install -y ${names}`,
    );
  }
  const started = Date.now();
  process.stdout.write(`Installing what the tests need with apt-get: ${names} ... `);
  aptGet(['update', '-qq']);
  aptGet(['install', '-y', '-qq', ...missing.map((tool) => tool.aptPackage)]);
  missing = missingTools();
  if (missing.length > 0) {
    stop(
      `apt-get installed ${names}, but ${missing.map((tool) => tool.command).join(', ')} is still missing.`,
    );
  }
  process.stdout.write(`done in ${Math.round((Date.now() - started) / 1000)} s\n`);
}

// The call scenarios add an nftables table and a tc qdisc on loopback: that takes root (or
// CAP_NET_ADMIN). Without it they would fail one by one; say so once, before anything runs.
if (!isRoot && spawnSync(locate('nft') ?? 'nft', ['list', 'tables'], { stdio: 'ignore' }).status !== 0) {
  stop(
    'The call scenarios (examples/video-call) change loopback network rules with nftables and tc, ' +
      'which needs root: run the tests as root, for example  sudo -E npx -y pnpm@10 test',
  );
}

process.stdout.write(
  `System tools for the tests: ${SYSTEM_TOOLS.map((tool) => tool.aptPackage).join(', ')} ok\n`,
);
