import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deleteWhileLocked } from '../../../test/row-lock.ts';
import { createTestApp, type TestApp, type TestProject } from '../../../test/test-app.ts';
import { ENGINES } from '../../../test/test-database.ts';
import { createId } from '../../platform/ids.ts';
import { findCluster, setClusterStatus, setClustersStatus } from './repository.ts';

// A status change is one statement scoped to the project: a cluster that is not there (any more,
// or not in the project) is `undefined` in the repository and a 404 `{ error, code: 'not_found' }`
// over HTTP, never a masked 500; several at once change all or none.

type Method = 'GET' | 'PATCH';

describe.each(ENGINES)('issue storage on %s', (engine) => {
  let test: TestApp;

  beforeAll(async () => {
    test = await createTestApp(engine);
  });
  afterAll(async () => {
    await test?.close();
  });

  /** A cluster without occurrences, last seen in release 1.2.0. */
  const newCluster = async (projectId: string) => {
    const id = createId('cl');
    const seen = new Date(Date.UTC(2026, 10, 20));
    await test.database.database
      .insertInto('issue_clusters')
      .values({
        project_id: projectId,
        id,
        fingerprint: `error:${id}`,
        kind: 'error',
        title: 'TypeError: x is undefined',
        severity: 'high',
        first_seen_at: seen,
        last_seen_at: seen,
        last_release: '1.2.0',
      })
      .execute();
    return id;
  };
  const deleteCluster = (projectId: string, id: string) =>
    test.database.database
      .deleteFrom('issue_clusters')
      .where('project_id', '=', projectId)
      .where('id', '=', id)
      .execute();
  const request = (project: TestProject, method: Method, url: string, body?: Record<string, unknown>) =>
    test.app.inject({
      method,
      url,
      headers: project.headers,
      ...(body === undefined ? {} : { payload: body }),
    });

  it("sets a status in one statement: undefined for a cluster that is gone or another project's", async () => {
    const database = test.database.database;
    const { project } = await test.createProject();
    const { project: other } = await test.createProject();
    const id = await newCluster(project.id);
    const now = new Date();

    expect(await setClusterStatus(database, other.id, id, { status: 'resolved' }, now)).toBeUndefined();
    expect(await setClustersStatus(database, other.id, [id], { status: 'ignored' }, now)).toEqual([]);
    expect(await findCluster(database, project.id, id)).toMatchObject({ status: 'open', resolved_at: null });

    expect(await setClusterStatus(database, project.id, id, { status: 'resolved' }, now)).toMatchObject({
      id,
      status: 'resolved',
      resolved_at: now,
      resolved_release: '1.2.0',
    });

    await deleteCluster(project.id, id);
    expect(await setClusterStatus(database, project.id, id, { status: 'open' }, now)).toBeUndefined();
    expect(await setClustersStatus(database, project.id, [id], { status: 'open' }, now)).toEqual([]);
    expect(await findCluster(database, project.id, id)).toBeUndefined();
  });

  it('answers 404 not_found for a cluster deleted between requests, and a bulk change with one changes none', async () => {
    const project = await test.createProject();
    const kept = await newCluster(project.project.id);
    const gone = await newCluster(project.project.id);
    await deleteCluster(project.project.id, gone);

    const noIssue = { error: `No issue ${gone}`, code: 'not_found' };
    const cases: [Method, string, Record<string, unknown> | undefined][] = [
      ['GET', `/v1/issues/${gone}`, undefined],
      ['PATCH', `/v1/issues/${gone}`, { status: 'resolved' }],
      ['GET', `/v1/issues/${gone}/sessions`, undefined],
      ['PATCH', '/v1/issues', { ids: [kept, gone], status: 'ignored' }],
    ];
    for (const [method, url, body] of cases) {
      const response = await request(project, method, url, body);
      expect(response.statusCode, `${method} ${url}: ${response.body}`).toBe(404);
      expect(response.json(), `${method} ${url}`).toEqual(noIssue);
    }
    // The bulk change rolled back: the cluster that exists was not ignored.
    const read = await request(project, 'GET', `/v1/issues/${kept}`);
    expect(read.json()).toMatchObject({ id: kept, status: 'open' });

    const changed = await request(project, 'PATCH', '/v1/issues', { ids: [kept, kept], status: 'ignored' });
    expect(changed.statusCode, changed.body).toBe(200);
    expect(changed.json().items).toEqual([expect.objectContaining({ id: kept, status: 'ignored' })]);
  });

  // Only PostgreSQL runs two statements at once: one waits for the row lock of the other.
  // PGlite runs one statement at a time: a row cannot be locked while another statement waits.
  if (engine === 'postgres')
    it('answers 404 not_found when the cluster is deleted while the request runs', async () => {
      const project = await test.createProject();
      const id = await newCluster(project.project.id);
      const response = await deleteWhileLocked(test.database.location, 'issue_clusters', id, () =>
        request(project, 'PATCH', `/v1/issues/${id}`, { status: 'resolved' }),
      );
      expect(response.statusCode, response.body).toBe(404);
      expect(response.json()).toEqual({ error: `No issue ${id}`, code: 'not_found' });
    });
});
