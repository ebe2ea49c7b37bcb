import { startTestPostgres, type TestPostgres } from '../test/postgres.ts';

/** A PostgreSQL for the benchmark, and how to stop it. */
export interface BenchPostgres extends TestPostgres {
  /** Whether this run started it (a server from SVC_BENCH_DATABASE_URL is left alone). */
  started: boolean;
}

/**
 * The PostgreSQL at `SVC_BENCH_DATABASE_URL` when set, otherwise a throwaway PostgreSQL 18 as
 * the tests start it, but with `fsync` on: an acknowledged chunk's rows must be on disk, or the
 * throughput would not be comparable with the fsync baseline.
 */
export function startBenchPostgres(): Promise<BenchPostgres> {
  return startTestPostgres({ fsync: true, urlVariable: 'SVC_BENCH_DATABASE_URL' });
}
