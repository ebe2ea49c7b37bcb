/**
 * The system programs the workspace's tests run, and where they come from: Debian's (and
 * Ubuntu's) packages, never a download (INFRA.md). `ensure.ts` checks them before `pnpm test`
 * and installs the missing ones with apt-get when it runs as root.
 */

import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';

export interface SystemTool {
  /** The program the tests start (looked up on PATH, or an absolute path). */
  command: string;
  /** The Debian/Ubuntu package that installs it. */
  aptPackage: string;
  /** Who needs it, for the messages. */
  usedBy: string;
}

/** Chromium as the tests find it: `/usr/bin/chromium` (apt) unless `SVC_CHROMIUM` points elsewhere. */
export const CHROMIUM_PATH = process.env.SVC_CHROMIUM ?? '/usr/bin/chromium';

/** Every program a test starts. A later test that needs another one adds it here. */
export const SYSTEM_TOOLS: readonly SystemTool[] = [
  {
    command: CHROMIUM_PATH,
    aptPackage: 'chromium',
    usedBy: 'the browser SDK tests and the call scenarios (headless, real WebRTC)',
  },
  { command: 'turnserver', aptPackage: 'coturn', usedBy: 'the call scenarios (TURN relay)' },
  { command: 'nft', aptPackage: 'nftables', usedBy: 'the call scenarios (packet loss)' },
  { command: 'tc', aptPackage: 'iproute2', usedBy: 'the call scenarios (bandwidth squeeze)' },
];

/** PATH plus the sbin folders (nft and tc live there; a non-root PATH may lack them). */
function searchPath(): string[] {
  const folders = (process.env.PATH ?? '').split(delimiter).filter(Boolean);
  for (const folder of ['/usr/local/sbin', '/usr/sbin', '/sbin', '/usr/bin', '/bin']) {
    if (!folders.includes(folder)) folders.push(folder);
  }
  return folders;
}

function isExecutable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** The full path of `command`, or `undefined` when it is not installed. */
export function locate(command: string): string | undefined {
  if (command.includes('/')) return isExecutable(command) ? command : undefined;
  for (const folder of searchPath()) {
    const candidate = join(folder, command);
    if (isExecutable(candidate)) return candidate;
  }
  return undefined;
}

/** The tools of `tools` that are not installed. */
export function missingTools(tools: readonly SystemTool[] = SYSTEM_TOOLS): SystemTool[] {
  return tools.filter((tool) => locate(tool.command) === undefined);
}
