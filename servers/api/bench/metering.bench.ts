/**
 * `pnpm bench`: the cost of metering usage on ingest. The real ingest path (decode, seal, write
 * the blob, index through the group-commit writer) runs in this process with 64 chunks in flight,
 * once with the writer that meters each batch in its statement (the server's) and once with one
 * that does not (the baseline), in alternating rounds on the same database and blob store, on
 * the embedded store and on PostgreSQL. HTTP is left out: it costs the same either way, so the
 * ratio here is the worst case of the ratio a client would see.
 *
 * Then the count is checked: the metered project's usage (sessions, chunks, bytes as sent and as
 * stored) must equal what ingest acknowledged, summed by this bench from the acknowledgements,
 * and what the chunks table holds.
 *
 * Settings: BENCH_SECONDS (per run, default 3), BENCH_ROUNDS (default 8), BENCH_CONNECTIONS
 * (default 64), BENCH_ONLY (comma list of embedded, postgres), SVC_BENCH_DATABASE_URL.
 */

import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { createOrganization } from '../src/modules/orgs/organizations.ts';
import { createProject } from '../src/modules/projects/projects.ts';
import { createChunkIndexWriter, SERVER_LINGER_MS } from '../src/modules/sessions/chunk-index-writer.ts';
import { decodeChunk } from '../src/modules/sessions/decode-chunk.ts';
import { ingestChunk } from '../src/modules/sessions/ingest-chunk.ts';
import { createIngestCounters } from '../src/modules/sessions/ingest-counters.ts';
import { openServices } from '../src/open-services.ts';
import { loadConfiguration } from '../src/platform/config.ts';
import { chunkIndexConcurrency } from '../src/services.ts';
import { createChunkBodies } from './chunks.ts';
import { type BenchPostgres, startBenchPostgres } from './postgres.ts';

// Many short rounds: a run's rate swings with the moment's fsyncs (±20 % from one run to the
// next), and the median of the rounds' ratios steadies only over several.
const SECONDS = Number(process.env.BENCH_SECONDS ?? 3);
const ROUNDS = Math.max(1, Number(process.env.BENCH_ROUNDS ?? 8));
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 64);
const ONLY = new Set((process.env.BENCH_ONLY ?? 'embedded,postgres').split(','));

const work = await mkdtemp(join(tmpdir(), 'svc-bench-metering-'));
let postgres: BenchPostgres | undefined;
const summary: string[] = [];
const silent = { info() {}, warn() {}, error() {} } as never;

/** What one run acknowledged. */
interface Acknowledged {
  chunks: number;
  sessions: Set<string>;
  ingestedBytes: number;
}

async function measure(store: 'embedded' | 'postgres'): Promise<void> {
  const environment: Record<string, string> = { SVC_DATA_DIR: join(work, store), SVC_LOG_LEVEL: 'silent' };
  if (store === 'postgres') {
    postgres ??= await startBenchPostgres();
    environment.DATABASE_URL = postgres.url;
    environment.SVC_MASTER_KEY = randomBytes(32).toString('base64');
  }
  const configuration = loadConfiguration(environment);
  const services = await openServices(configuration);
  try {
    const database = services.database.database;
    const organization = await createOrganization(database, 'bench');
    const project = (metered: boolean) =>
      createProject(database, {
        organizationId: organization.id,
        name: metered ? 'metered' : 'baseline',
        masterKey: services.masterKey,
      });
    const sides = await Promise.all(
      [true, false].map(async (metered) => ({
        metered,
        project: await project(metered),
        writer: createChunkIndexWriter({
          database,
          concurrency: chunkIndexConcurrency(configuration.database),
          lingerMs: SERVER_LINGER_MS,
          flush: services.database.flush,
          metered,
        }),
        bodies: createChunkBodies({ concurrentSessions: CONNECTIONS }),
        rates: [] as number[],
        acknowledged: { chunks: 0, sessions: new Set<string>(), ingestedBytes: 0 } as Acknowledged,
      })),
    );
    const counters = createIngestCounters();

    async function run(side: (typeof sides)[number], seconds: number, count: boolean): Promise<number> {
      const deadline = performance.now() + seconds * 1000;
      let done = 0;
      const worker = async () => {
        while (performance.now() < deadline) {
          const body = side.bodies.next();
          const decoded = await decodeChunk(body, 'json+deflate', {
            strictPrivacy: false,
            requestQueryParams: [],
          });
          if (!decoded.success) throw new Error(decoded.message);
          const outcome = await ingestChunk(
            {
              blobStore: services.blobStore,
              masterKey: services.masterKey,
              chunkIndex: side.writer,
              counters,
              log: silent,
            },
            side.project,
            decoded.decoded,
          );
          if (outcome.status !== 'stored') throw new Error(`unexpected ${outcome.status}`);
          done += 1;
          side.acknowledged.chunks += 1;
          side.acknowledged.sessions.add(decoded.decoded.chunk.sessionId);
          side.acknowledged.ingestedBytes += decoded.decoded.receivedBytes;
        }
      };
      const started = performance.now();
      await Promise.all(Array.from({ length: CONNECTIONS }, worker));
      const rate = done / ((performance.now() - started) / 1000);
      if (count) side.rates.push(rate);
      return rate;
    }

    for (const side of sides) await run(side, 1, false);
    for (let round = 0; round < ROUNDS; round += 1) {
      // Alternating which goes first, so neither always follows the other.
      const order = round % 2 === 0 ? sides : [...sides].reverse();
      for (const side of order) await run(side, SECONDS, true);
    }
    const median = (values: number[]) =>
      [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? 0;
    const [on, off] = sides as [(typeof sides)[number], (typeof sides)[number]];
    const ratios = on.rates.map((rate, index) => rate / (off.rates[index] ?? rate));
    const slower = (1 - median(ratios)) * 100;
    summary.push(
      `${store}: metering on ${median(on.rates).toFixed(0)} chunks/s, off ${median(off.rates).toFixed(0)} chunks/s; on/off per round ${ratios.map((ratio) => ratio.toFixed(3)).join(', ')} (median ${median(ratios).toFixed(3)}: ${slower.toFixed(1)} % slower; target ≤ 5 %)`,
    );

    // The count: usage equals what was acknowledged and what the chunks table holds.
    for (const side of sides) await side.writer.drain();
    const usage = await database
      .selectFrom('usage_daily')
      .select([
        sql<number>`coalesce(sum(sessions), 0)::bigint`.as('sessions'),
        sql<number>`coalesce(sum(chunks), 0)::bigint`.as('chunks'),
        sql<number>`coalesce(sum(ingested_bytes), 0)::bigint`.as('ingested'),
        sql<number>`coalesce(sum(stored_bytes), 0)::bigint`.as('stored'),
      ])
      .where('project_id', '=', on.project.id)
      .executeTakeFirstOrThrow();
    const table = await database
      .selectFrom('chunks')
      .select([
        sql<number>`count(*)::bigint`.as('chunks'),
        sql<number>`count(distinct session_id)::bigint`.as('sessions'),
        sql<number>`coalesce(sum(received_bytes), 0)::bigint`.as('ingested'),
        sql<number>`coalesce(sum(stored_bytes), 0)::bigint`.as('stored'),
      ])
      .where('project_id', '=', on.project.id)
      .executeTakeFirstOrThrow();
    const baseline = await database
      .selectFrom('usage_daily')
      .select(sql<number>`count(*)::int`.as('rows'))
      .where('project_id', '=', off.project.id)
      .executeTakeFirstOrThrow();
    const metered = {
      sessions: Number(usage.sessions),
      chunks: Number(usage.chunks),
      ingested: Number(usage.ingested),
      stored: Number(usage.stored),
    };
    const acknowledged = {
      sessions: on.acknowledged.sessions.size,
      chunks: on.acknowledged.chunks,
      ingested: on.acknowledged.ingestedBytes,
      stored: Number(table.stored),
    };
    const exact =
      JSON.stringify(metered) === JSON.stringify(acknowledged) &&
      Number(table.chunks) === acknowledged.chunks &&
      Number(table.sessions) === acknowledged.sessions &&
      Number(table.ingested) === acknowledged.ingested &&
      Number(baseline.rows) === 0;
    summary.push(
      `${store}: metered ${metered.chunks} chunks, ${metered.sessions} sessions, ${metered.ingested} bytes as sent, ${metered.stored} stored; acknowledged ${acknowledged.chunks} chunks, ${acknowledged.sessions} sessions, ${acknowledged.ingested} bytes (the chunks table: ${table.chunks}, ${table.sessions}, ${table.ingested}, ${table.stored}): ${exact ? 'exact' : 'MISMATCH'}`,
    );
    if (!exact) process.exitCode = 1;
  } finally {
    await services.close();
  }
}

try {
  for (const store of ['embedded', 'postgres'] as const) if (ONLY.has(store)) await measure(store);
  console.log(`\n## Metering on ingest (${ROUNDS} rounds of ${SECONDS} s, ${CONNECTIONS} in flight)\n`);
  for (const line of summary) console.log(`- ${line}`);
} finally {
  await postgres?.stop();
  await rm(work, { recursive: true, force: true });
}
