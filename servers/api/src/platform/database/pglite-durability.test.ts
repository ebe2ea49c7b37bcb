import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openTestDatabase, type TestDatabase } from '../../../test/test-database.ts';
import { readWalPosition } from './database.ts';
import { createPGliteDurability, type DurabilityEvent } from './pglite-durability.ts';

describe('PGlite durability barrier', () => {
  let database: TestDatabase;
  const events: DurabilityEvent[] = [];
  let durability: ReturnType<typeof createPGliteDurability>;

  beforeAll(async () => {
    database = await openTestDatabase('pglite');
    durability = createPGliteDurability({
      directory: database.location,
      position: () => readWalPosition(database.database),
      onFlush: (event) => events.push(event),
    });
    await sql`create table filler (id serial primary key, body text not null)`.execute(database.database);
  });

  afterAll(async () => {
    await database?.dispose();
  });

  it('runs PGlite with the WAL retention the barrier relies on', async () => {
    const { rows } = await sql<{ keep: string; max: string; fsync: string }>`
      select current_setting('wal_keep_size') as keep, current_setting('max_wal_size') as max,
             current_setting('fsync') as fsync
    `.execute(database.database);
    expect(rows[0]).toEqual({ keep: '160MB', max: '64MB', fsync: 'off' });
  });

  it('flushes everything first, then the WAL segment of each commit, then all after a checkpoint', async () => {
    events.length = 0;
    await durability.flush();
    expect(events).toEqual([{ kind: 'full', reason: 'first' }]);

    await sql`insert into filler (body) values ('one row')`.execute(database.database);
    const { segment } = await readWalPosition(database.database);
    await durability.flush();
    expect(events[1]).toEqual({ kind: 'wal', segments: [segment] });

    // More than one 16 MB segment of WAL: every segment written since the last flush, in order.
    await sql`insert into filler (body) select repeat(md5(i::text), 40) from generate_series(1, 15000) as i`.execute(
      database.database,
    );
    const after = await readWalPosition(database.database);
    expect(after.segment > segment).toBe(true);
    await durability.flush();
    const wal = events[2];
    expect(wal?.kind).toBe('wal');
    const segments = wal?.kind === 'wal' ? wal.segments : [];
    const onDisk = (await readdir(join(database.location, 'pg_wal'))).filter(
      (name) => name >= segment && name <= after.segment,
    );
    expect(segments).toEqual(onDisk.sort());
    expect(segments[0]).toBe(segment);
    expect(segments.at(-1)).toBe(after.segment);
    expect(segments.length).toBeGreaterThanOrEqual(2);

    await sql`checkpoint`.execute(database.database);
    await durability.flush();
    expect(events[3]).toEqual({ kind: 'full', reason: 'checkpoint' });

    await durability.flush();
    expect(events[4]).toEqual({ kind: 'wal', segments: [after.segment] });
  });
});
