import pg from 'pg';

/** Tables whose rows {@link deleteWhileLocked} can delete under a request. */
export type LockableTable = 'notification_channels' | 'notification_rules' | 'issue_clusters';

/**
 * PostgreSQL only (`location` is the test database's URL): deletes a row while a request runs,
 * at the worst moment. Another connection locks the row (`select … for update`), `send` starts
 * the request, and once one of its statements waits for that lock the row is deleted and the
 * lock released (commit). What the request read before the wait still saw the row; the statement
 * that waited finds it gone. A route that checks and then writes "the row it found" is caught
 * between the two.
 *
 * @example
 * ```ts
 * const response = await deleteWhileLocked(test.database.location, 'notification_rules', rule.id, () =>
 *   test.app.inject({ method: 'PATCH', url: `/v1/notifications/rules/${rule.id}`, payload, headers }),
 * );
 * expect(response.statusCode).toBe(404);
 * ```
 */
export async function deleteWhileLocked<Result>(
  location: string,
  table: LockableTable,
  id: string,
  send: () => PromiseLike<Result>,
  timeoutMs = 10_000,
): Promise<Result> {
  const holder = new pg.Client({ connectionString: location });
  const watcher = new pg.Client({ connectionString: location });
  await holder.connect();
  await watcher.connect();
  try {
    await holder.query('begin');
    const locked = await holder.query(`select id from ${table} where id = $1 for update`, [id]);
    if (locked.rowCount !== 1) throw new Error(`No ${table} row ${id} to lock`);
    const { rows } = await holder.query<{ pid: number }>('select pg_backend_pid() as pid');
    const holderPid = rows[0]?.pid;
    const pending = Promise.resolve(send());
    // Seen as settled by the wait below, so a request that never waits fails fast with its answer.
    let settled = false;
    pending.then(
      () => (settled = true),
      () => (settled = true),
    );
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const waiting = await watcher.query(
        'select 1 from pg_stat_activity where $1::int = any(pg_blocking_pids(pid))',
        [holderPid],
      );
      if ((waiting.rowCount ?? 0) > 0) break;
      if (settled) throw new Error(`The request answered without waiting for the lock on ${table} ${id}`);
      if (Date.now() > deadline) throw new Error(`No statement waited for the lock on ${table} ${id}`);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    await holder.query(`delete from ${table} where id = $1`, [id]);
    await holder.query('commit');
    return await pending;
  } finally {
    await holder.end();
    await watcher.end();
  }
}
