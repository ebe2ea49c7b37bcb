import { readFile } from 'node:fs/promises';
import { type Kysely, sql } from 'kysely';

/** CPU time so far of each process of a PostgreSQL server, ns by pid. */
export type PostgresCpuReading = ReadonlyMap<number, number>;

/**
 * Reads the CPU time of a PostgreSQL server's processes on this machine from `/proc`, without
 * asking the server: the postmaster (found once, as the parent of a backend) and its children
 * (backends, WAL writer, checkpointer, ...). Asking `pg_stat_activity` for the pids costs the
 * server ~0.7 ms of CPU each time, which a measurement around every job would add to every job.
 * `undefined` when the server is not on this machine.
 *
 * @example
 * ```ts
 * const read = await createPostgresCpuReader(database);
 * const before = await read?.();
 * // ... the work ...
 * const spentMicroseconds = cpuSpent(before, await read?.());
 * ```
 */
export async function createPostgresCpuReader(
  database: Kysely<never>,
): Promise<(() => Promise<PostgresCpuReading | undefined>) | undefined> {
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
  return async () => {
    try {
      const children = (await readFile(`/proc/${postmaster}/task/${postmaster}/children`, 'utf8'))
        .trim()
        .split(' ')
        .filter((pid) => pid !== '')
        .map(Number);
      const reading = new Map<number, number>();
      for (const pid of [postmaster, ...children]) {
        try {
          reading.set(pid, Number((await readFile(`/proc/${pid}/schedstat`, 'utf8')).split(' ')[0]));
        } catch {
          // A process that ended between the two reads: its time is lost, as a process that
          // ended before the reading's would be.
        }
      }
      return reading;
    } catch {
      return undefined;
    }
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
