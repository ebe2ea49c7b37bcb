import { closeSync, openSync, readSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { type Kysely, sql } from 'kysely';

/** CPU time so far of each process of a PostgreSQL server, ns by pid. */
export type PostgresCpuReading = ReadonlyMap<number, number>;

/**
 * Reads the CPU time of a PostgreSQL server's processes on this machine from `/proc`, without
 * asking the server: the postmaster (found once, as the parent of a backend) and its children
 * (backends, WAL writer, checkpointer, ...). Asking `pg_stat_activity` for the pids costs the
 * server ~0.7 ms of CPU each time, which a measurement around every job would add to every job.
 * The files stay open and are read into one buffer, so that a reading leaves almost no garbage
 * for this process's collector to clean up inside the next measurement. `undefined` when the
 * server is not on this machine.
 *
 * @example
 * ```ts
 * const read = await createPostgresCpuReader(database);
 * const before = read?.();
 * // ... the work ...
 * const spentMicroseconds = cpuSpent(before, read?.());
 * ```
 */
export async function createPostgresCpuReader(
  database: Kysely<never>,
): Promise<(() => PostgresCpuReading | undefined) | undefined> {
  const { rows } = await sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(database);
  const backend = rows[0]?.pid;
  if (backend === undefined) return undefined;
  let postmaster: number;
  try {
    // /proc/<pid>/stat: "pid (comm) state ppid ..."; comm may hold spaces, so read after its ')'.
    const stat = await readFile(`/proc/${backend}/stat`, 'utf8');
    postmaster = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
  } catch {
    return undefined;
  }
  const buffer = Buffer.alloc(4096);
  const files = new Map<number, number>();
  /** The first decimal number of an open /proc file, read again from its start; undefined when it is gone. */
  const firstNumber = (descriptor: number): number | undefined => {
    let length: number;
    try {
      length = readSync(descriptor, buffer, 0, buffer.length, 0);
    } catch {
      return undefined;
    }
    let value = 0;
    for (let index = 0; index < length; index++) {
      const digit = (buffer[index] as number) - 48;
      if (digit < 0 || digit > 9) break;
      value = value * 10 + digit;
    }
    return value;
  };
  let children: number;
  try {
    children = openSync(`/proc/${postmaster}/task/${postmaster}/children`, 'r');
  } catch {
    return undefined;
  }
  return () => {
    let length: number;
    try {
      length = readSync(children, buffer, 0, buffer.length, 0);
    } catch {
      return undefined;
    }
    const pids = [postmaster];
    let pid = 0;
    for (let index = 0; index < length; index++) {
      const digit = (buffer[index] as number) - 48;
      if (digit >= 0 && digit <= 9) pid = pid * 10 + digit;
      else if (pid > 0) {
        pids.push(pid);
        pid = 0;
      }
    }
    if (pid > 0) pids.push(pid);
    const reading = new Map<number, number>();
    for (const each of pids) {
      let descriptor = files.get(each);
      if (descriptor === undefined) {
        try {
          descriptor = openSync(`/proc/${each}/schedstat`, 'r');
        } catch {
          // A process that ended between the two reads: its time is lost, as a process that
          // ended before the reading's would be.
          continue;
        }
        files.set(each, descriptor);
      }
      const time = firstNumber(descriptor);
      if (time === undefined) {
        closeSync(descriptor);
        files.delete(each);
        continue;
      }
      reading.set(each, time);
    }
    return reading;
  };
}

/**
 * The CPU the server's processes spent between two readings, µs: each process's growth, the
 * whole time of a process started since (0 when either reading is missing).
 */
export function cpuSpent(
  before: PostgresCpuReading | undefined,
  after: PostgresCpuReading | undefined,
): number {
  if (before === undefined || after === undefined) return 0;
  let spent = 0;
  for (const [pid, time] of after) spent += Math.max(0, time - (before.get(pid) ?? 0));
  return spent / 1000;
}
