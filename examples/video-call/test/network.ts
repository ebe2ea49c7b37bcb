import { type ChildProcess, execFile, execFileSync, spawn } from 'node:child_process';
import { createSocket } from 'node:dgram';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

// The network the scenarios run on (INFRA.md): coturn on 127.0.0.1, packet loss from an
// nftables table, a bandwidth squeeze from a tc htb class on `lo`. Every change is undone by
// `restoreNetwork()`, which the suite runs before it starts, after each scenario and at exit.

const run = promisify(execFile);

/** The nftables table the scenarios own (and delete). */
const NFT_TABLE = 'svc_e2e';

/** A free UDP port on 127.0.0.1. */
async function freeUdpPort(): Promise<number> {
  const socket = createSocket('udp4');
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
  const { port } = socket.address();
  await new Promise<void>((resolve) => socket.close(() => resolve()));
  return port;
}

export interface Turn {
  /** `turn:127.0.0.1:<port>` */
  url: string;
  port: number;
  username: string;
  credential: string;
  stop(): Promise<void>;
}

const running = new Set<ChildProcess>();
// A run that dies (a failed hook, Ctrl-C) still stops coturn and takes its rules back.
process.once('exit', () => {
  for (const child of running) child.kill('SIGKILL');
  try {
    execFileSync('nft', ['delete', 'table', 'inet', NFT_TABLE], { stdio: 'ignore' });
  } catch {}
  try {
    if (/qdisc htb 1: root/.test(execFileSync('tc', ['qdisc', 'show', 'dev', 'lo']).toString()))
      execFileSync('tc', ['qdisc', 'del', 'dev', 'lo', 'root'], { stdio: 'ignore' });
  } catch {}
});

/**
 * Starts coturn (`turnserver`, from apt) on 127.0.0.1 with one long-term user, relaying on
 * loopback; resolves once it listens.
 */
export async function startTurn(): Promise<Turn> {
  const port = await freeUdpPort();
  const directory = await mkdtemp(join(tmpdir(), 'svc-turn-'));
  const relayFrom = 49_160 + (port % 20) * 40;
  const child = spawn(
    'turnserver',
    [
      '-n',
      '--listening-ip=127.0.0.1',
      '--relay-ip=127.0.0.1',
      `--listening-port=${port}`,
      `--min-port=${relayFrom}`,
      `--max-port=${relayFrom + 39}`,
      '--lt-cred-mech',
      '--user=test:test',
      '--realm=svc.local',
      `--userdb=${join(directory, 'turndb')}`,
      '--allow-loopback-peers',
      '--no-tls',
      '--no-dtls',
      '--no-cli',
      '--fingerprint',
      '--log-file=stdout',
      '--simple-log',
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  running.add(child);
  let output = '';
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`coturn did not start:\n${output}`)), 10_000);
    child.once('error', (error) => {
      clearTimeout(timer);
      reject(new Error(`coturn could not run (pnpm test:setup installs it): ${error.message}`));
    });
    child.stdout?.on('data', (data: Buffer) => {
      output += data.toString();
      // Its UDP listener opens with the general servers; the database of users comes last.
      if (/SQLite DB connection success/.test(output)) {
        clearTimeout(timer);
        resolve();
      }
    });
  });
  return {
    url: `turn:127.0.0.1:${port}`,
    port,
    username: 'test',
    credential: 'test',
    async stop() {
      running.delete(child);
      if (child.exitCode === null) {
        const exited = new Promise((resolve) => child.once('exit', resolve));
        child.kill('SIGTERM');
        await exited;
      }
      await rm(directory, { recursive: true, force: true });
    },
  };
}

/** Drops `percent` % of the UDP packets to and from `port` (nftables, random). */
export async function dropPackets(port: number, percent: number): Promise<void> {
  const rules = [
    `add table inet ${NFT_TABLE}`,
    `add chain inet ${NFT_TABLE} input { type filter hook input priority 0 ; policy accept ; }`,
    `add rule inet ${NFT_TABLE} input udp dport ${port} numgen random mod 100 < ${percent} counter drop`,
    `add rule inet ${NFT_TABLE} input udp sport ${port} numgen random mod 100 < ${percent} counter drop`,
  ];
  for (const rule of rules) await run('nft', rule.split(' '));
}

/** Limits the UDP traffic to and from `port` on `lo` to `kbit` kbit/s (tc htb, a short queue). */
export async function squeeze(port: number, kbit: number): Promise<void> {
  const commands = [
    'qdisc add dev lo root handle 1: htb default 10',
    'class add dev lo parent 1: classid 1:10 htb rate 10gbit',
    `class add dev lo parent 1: classid 1:20 htb rate ${kbit}kbit ceil ${kbit}kbit`,
    'qdisc add dev lo parent 1:20 handle 20: pfifo limit 20',
    `filter add dev lo parent 1: protocol ip prio 1 u32 match ip sport ${port} 0xffff flowid 1:20`,
    `filter add dev lo parent 1: protocol ip prio 1 u32 match ip dport ${port} 0xffff flowid 1:20`,
  ];
  for (const command of commands) await run('tc', command.split(' '));
}

/** Removes the scenarios' nftables table and `lo`'s root qdisc, whichever exist. */
export async function restoreNetwork(): Promise<void> {
  await run('nft', ['delete', 'table', 'inet', NFT_TABLE]).catch(() => {});
  const { stdout } = await run('tc', ['qdisc', 'show', 'dev', 'lo']).catch(() => ({ stdout: '' }));
  if (/qdisc htb 1: root/.test(stdout)) await run('tc', ['qdisc', 'del', 'dev', 'lo', 'root']);
}

/** What `nft` counted as dropped by the loss rules (0 without the table). */
export async function droppedPackets(): Promise<number> {
  const { stdout } = await run('nft', ['list', 'table', 'inet', NFT_TABLE]).catch(() => ({ stdout: '' }));
  return [...stdout.matchAll(/counter packets (\d+)/g)].reduce((sum, match) => sum + Number(match[1]), 0);
}

/** A port nothing listens on (for a TURN server that cannot be reached). */
export const unreachablePort = freeUdpPort;
