import { type ChildProcess, spawn } from 'node:child_process';
import { openSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from '../test/postgres.ts';

// Child processes of the benchmark: every server runs as its own process (the real Node binary,
// `process.execPath`, never pnpm's `node` shim, which does not pass SIGTERM on), with its output
// in a log file, and is stopped with SIGTERM and awaited.

/** The servers/api package directory: children run from here so `src/...` paths resolve. */
export const PACKAGE_DIRECTORY = fileURLToPath(new URL('..', import.meta.url));

/** A running child process. */
export interface Child {
  readonly name: string;
  readonly pid: number;
  /** The log file holding its stdout and stderr. */
  readonly logFile: string;
  /** Resolves with the exit code (or signal) once the process is gone. */
  readonly exited: Promise<string>;
  /** SIGTERM, then SIGKILL after `graceMs`; resolves once the process has exited. */
  stop(graceMs?: number): Promise<string>;
}

const running = new Set<ChildProcess>();

// Whatever happens to the benchmark (an exception, Ctrl-C), its children go with it.
process.once('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    for (const child of running) child.kill('SIGKILL');
    process.exit(130);
  });
}

/**
 * Starts `node --conditions=@svc/source <script>` from the package directory with `environment`
 * (added to this process's), its output appended to `logFile`.
 */
export function startNode(
  name: string,
  script: string,
  options: { arguments?: string[]; environment?: Record<string, string>; logFile: string },
): Child {
  const log = openSync(options.logFile, 'a');
  const child = spawn(process.execPath, ['--conditions=@svc/source', script, ...(options.arguments ?? [])], {
    cwd: PACKAGE_DIRECTORY,
    env: { ...process.env, ...options.environment },
    stdio: ['ignore', log, log],
  });
  if (child.pid === undefined) throw new Error(`${name}: could not start ${script}`);
  running.add(child);
  const exited = new Promise<string>((resolve) => {
    child.once('exit', (code, signal) => {
      running.delete(child);
      resolve(signal ?? String(code));
    });
  });
  return {
    name,
    pid: child.pid,
    logFile: options.logFile,
    exited,
    async stop(graceMs = 15_000) {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
        await exited;
        clearTimeout(timer);
      }
      return exited;
    },
  };
}

/** The last lines of a child's log, to explain a failure. */
export function tailOf(child: Child, lines = 20): string {
  try {
    return readFileSync(child.logFile, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
  } catch {
    return '(no log)';
  }
}

export { freePort };

/** Polls `url` until it answers 200; fails early when `child` exits, or after `timeoutMs`. */
export async function waitUntilReady(child: Child, url: string, timeoutMs = 60_000): Promise<void> {
  let exit: string | undefined;
  void child.exited.then((code) => {
    exit = code;
  });
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (exit !== undefined)
      throw new Error(`${child.name} exited (${exit}) before it was ready:\n${tailOf(child)}`);
    try {
      const response = await fetch(url);
      if (response.ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`${child.name} was not ready at ${url} within ${timeoutMs} ms:\n${tailOf(child)}`);
}

/** Resident memory of a process, in bytes: now (VmRSS) and its peak so far (VmHWM). */
export interface Memory {
  rss: number;
  peak: number;
}

/** Reads VmRSS and VmHWM from /proc (Linux); `undefined` elsewhere or once the process is gone. */
export function readMemory(pid: number): Memory | undefined {
  let status: string;
  try {
    status = readFileSync(`/proc/${pid}/status`, 'utf8');
  } catch {
    return undefined;
  }
  const kilobytes = (field: string) =>
    Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1]) * 1024;
  const rss = kilobytes('VmRSS');
  const peak = kilobytes('VmHWM');
  return Number.isFinite(rss) && Number.isFinite(peak) ? { rss, peak } : undefined;
}

/**
 * Resets the process's peak RSS (VmHWM) to its current RSS (`echo 5 > /proc/<pid>/clear_refs`),
 * so a later VmHWM is the peak of what ran since. `false` when the kernel does not allow it.
 */
export function resetPeakMemory(pid: number): boolean {
  try {
    writeFileSync(`/proc/${pid}/clear_refs`, '5');
    return true;
  } catch {
    return false;
  }
}

/** Samples a process's RSS every `intervalMs` until stopped: the samples and the peak seen. */
export function sampleMemory(pid: number, intervalMs = 100) {
  const samples: number[] = [];
  const timer = setInterval(() => {
    const memory = readMemory(pid);
    if (memory !== undefined) samples.push(memory.rss);
  }, intervalMs);
  return {
    stop(): { samples: number[]; max: number } {
      clearInterval(timer);
      return { samples, max: Math.max(0, ...samples) };
    },
  };
}

/** Megabytes, rounded, for printing. */
export function megabytes(bytes: number): string {
  return `${Math.round(bytes / (1024 * 1024))} MB`;
}

/** CPU time in microseconds: user and system (kernel) time. */
export interface CpuTime {
  user: number;
  system: number;
}

/** Linux reports process and machine CPU in clock ticks of 1/100 s (USER_HZ). */
const MICROSECONDS_PER_TICK = 10_000;

/** CPU used so far by a process and all its threads (/proc/<pid>/stat); `undefined` elsewhere. */
export function readProcessCpu(pid: number): CpuTime | undefined {
  try {
    // The command name (field 2) may hold spaces: the fields after it start after its ')'.
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // utime and stime are fields 14 and 15 of the whole line, 12 and 13 after the name.
    return {
      user: Number(fields[11]) * MICROSECONDS_PER_TICK,
      system: Number(fields[12]) * MICROSECONDS_PER_TICK,
    };
  } catch {
    return undefined;
  }
}

/** CPU of the whole machine so far (/proc/stat), every core summed: busy user and system time, idle. */
export interface MachineCpu extends CpuTime {
  idle: number;
}

export function readMachineCpu(): MachineCpu | undefined {
  try {
    const line = readFileSync('/proc/stat', 'utf8').split('\n')[0] ?? '';
    const [user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0] = line
      .trim()
      .split(/\s+/)
      .slice(1)
      .map(Number);
    return {
      user: (user + nice) * MICROSECONDS_PER_TICK,
      system: (system + irq + softirq) * MICROSECONDS_PER_TICK,
      idle: (idle + iowait) * MICROSECONDS_PER_TICK,
    };
  } catch {
    return undefined;
  }
}

/** A running API server process of a bench. */
export interface BenchApi {
  child: Child;
  url: string;
  /** Seconds from spawning to /readyz answering. */
  startSeconds: number;
}

/**
 * The processes a bench starts, logging into `work`: `start` any script, `startApi` the real
 * server on a free port (resolves once /readyz answers), `stop` one (reporting an unclean exit),
 * `stopAll` at the end, even after a failure.
 */
export function createBenchProcesses(work: string, readyTimeoutMs = 120_000) {
  const children: Child[] = [];
  const start = (name: string, script: string, options: Parameters<typeof startNode>[2]): Child => {
    const child = startNode(name, script, options);
    children.push(child);
    return child;
  };
  return {
    start,
    async startApi(name: string, environment: Record<string, string>): Promise<BenchApi> {
      const port = await freePort();
      const child = start(name, 'src/server.ts', {
        environment: { HOST: '127.0.0.1', PORT: String(port), SVC_LOG_LEVEL: 'info', ...environment },
        logFile: join(work, `${name}.log`),
      });
      const started = performance.now();
      await waitUntilReady(child, `http://127.0.0.1:${port}/readyz`, readyTimeoutMs);
      return { child, url: `http://127.0.0.1:${port}`, startSeconds: (performance.now() - started) / 1000 };
    },
    async stop(child: Child): Promise<void> {
      const code = await child.stop();
      if (code !== '0') console.log(`  (${child.name} exited with ${code}:\n${tailOf(child, 5)})`);
    },
    async stopAll(): Promise<void> {
      for (const child of children) await child.stop(5000);
    },
  };
}
