import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sessionMeta } from '../../../test/call-timelines.ts';
import { expectJson, type Json } from '../../../test/http.ts';
import { newSessionId, postChunk } from '../../../test/ingest-helpers.ts';
import { createTestApp, type TestApp, type TestProject } from '../../../test/test-app.ts';
import { ENGINES } from '../../../test/test-database.ts';
import { createId } from '../../platform/ids.ts';
import { type BuiltBundle, buildCheckout, CALL_LINE, stackOf, THROW_LINE } from './sourcemaps.fixture.ts';

// Errors of sessions through the source maps, in processing: fingerprinted by their original
// frames (one bug in two builds is one cluster), a cluster made before the map keeps its id, and
// the session's error shows the mapped frames, as does its cluster's latest error
// (`GET /v1/issues/{id}`).

const URL_OF_BUNDLE = 'https://shop.example.com/static/js/main.js';
const T0 = Date.parse('2026-11-25T09:00:00Z');

let buildOne: BuiltBundle;
let buildTwo: BuiltBundle;
beforeAll(async () => {
  buildOne = await buildCheckout({ name: 'main.js', debugId: true });
  // Four more exports: the minifier names the functions differently, and positions move.
  buildTwo = await buildCheckout({ name: 'main.js', debugId: true, padding: 4 });
});

describe.each(ENGINES)('symbolicated errors in processing, on %s', (engine) => {
  let test: TestApp;
  let base: string;

  beforeAll(async () => {
    test = await createTestApp(engine);
    base = await test.app.listen({ host: '127.0.0.1', port: 0 });
  });
  afterAll(async () => {
    await test?.close();
  });

  async function upload(project: TestProject, bundle: BuiltBundle, release: string) {
    const form = new FormData();
    form.append('release', release);
    form.append('urlPrefix', '~/static/js/');
    form.append('file', new Blob([bundle.code]), 'main.js');
    form.append('file', new Blob([bundle.map]), 'main.js.map');
    const response = await fetch(`${base}/v1/sourcemaps`, {
      method: 'POST',
      headers: project.headers,
      body: form,
    });
    expect(response.status).toBe(201);
  }

  /** The stack each session's error was sent with, by session id. */
  const sentStacks = new Map<string, string>();

  /** A session of `release` whose page threw the checkout error of `bundle`; processed. */
  async function erroredSession(project: TestProject, bundle: BuiltBundle, release: string) {
    const sessionId = newSessionId();
    const stack = stackOf(bundle, URL_OF_BUNDLE);
    sentStacks.set(sessionId, stack);
    const chunk = {
      v: 1,
      sessionId,
      seq: 0,
      sentAt: T0 + 5_000,
      meta: sessionMeta(T0, { release }),
      events: [
        {
          t: T0 + 1_000,
          type: 'error',
          name: 'TypeError',
          message: 'cart has no items',
          stack,
          source: 'onerror',
        },
      ],
    };
    expectJson(await postChunk(test.app, project.projectKey, Buffer.from(JSON.stringify(chunk))), 200);
    await test.processingWorker.runUntilIdle();
    return sessionId;
  }

  async function errorClusters(project: TestProject) {
    const response = await test.app.inject({ url: '/v1/issues?kind=error', headers: project.headers });
    return expectJson(response, 200).items as Json[];
  }

  async function sessionError(project: TestProject, sessionId: string) {
    const response = await test.app.inject({
      url: `/v1/sessions/${sessionId}/issues`,
      headers: project.headers,
    });
    return (expectJson(response, 200).items as Json[]).find((item) => item.kind === 'error');
  }

  async function issueDetail(project: TestProject, id: string) {
    return expectJson(await test.app.inject({ url: `/v1/issues/${id}`, headers: project.headers }), 200);
  }

  it('without maps, two builds of one bug are two clusters (the control), each showing its raw stack', async () => {
    const project = await test.createProject('No maps');
    const first = await erroredSession(project, buildOne, '1.0.0');
    const second = await erroredSession(project, buildTwo, '1.1.0');
    const clusters = await errorClusters(project);
    expect(clusters).toHaveLength(2);
    const latestErrors = await Promise.all(
      clusters.map(async (cluster) => (await issueDetail(project, cluster.id)).latestError),
    );
    expect(latestErrors.map((error) => error.sessionId).sort()).toEqual([first, second].sort());
    for (const error of latestErrors) {
      expect(error).toMatchObject({
        name: 'TypeError',
        message: 'cart has no items',
        t: new Date(T0 + 1_000).toISOString(),
      });
      expect(error.frames).toBeUndefined();
      expect(error.stack).toBe(sentStacks.get(error.sessionId));
    }
  });

  it('a detector cluster has no latest error', async () => {
    const project = await test.createProject('Detector');
    const sessionId = await erroredSession(project, buildOne, '1.0.0');
    const id = createId('cl');
    const seen = new Date(T0);
    const database = test.database.database;
    await database
      .insertInto('issue_clusters')
      .values({
        project_id: project.project.id,
        id,
        fingerprint: 'webrtc_one_way_media',
        kind: 'webrtc_one_way_media',
        title: 'One-way media in a call',
        severity: 'high',
        first_seen_at: seen,
        last_seen_at: seen,
        last_release: null,
      })
      .execute();
    await database
      .insertInto('cluster_occurrences')
      .values({
        project_id: project.project.id,
        session_id: sessionId,
        occurrence_key: 'finding:pc0:webrtc_one_way_media',
        cluster_id: id,
        t: seen,
        seen_at: new Date(),
        release: '1.0.0',
        environment: null,
      })
      .execute();
    const detail = await issueDetail(project, id);
    expect(detail).toMatchObject({ id, kind: 'webrtc_one_way_media', occurrences: 1 });
    expect(detail).not.toHaveProperty('latestError');
  });

  it('with maps, two builds are one cluster, the cluster made before the map keeps its id, and the error shows its original frames', async () => {
    const project = await test.createProject('Maps');
    // Before any map: a cluster by the minified frames.
    const early = await erroredSession(project, buildOne, '1.0.0');
    const [before] = await errorClusters(project);
    expect(before).toMatchObject({ occurrences: 1 });
    expect((await sessionError(project, early)).details.frames).toBeUndefined();
    const unmapped = (await issueDetail(project, before.id)).latestError;
    expect(unmapped).toMatchObject({
      sessionId: early,
      name: 'TypeError',
      stack: sentStacks.get(early),
    });
    expect(unmapped.frames).toBeUndefined();

    await upload(project, buildOne, '1.0.0');
    const mapped = await erroredSession(project, buildOne, '1.0.0');
    await upload(project, buildTwo, '1.1.0');
    const secondBuild = await erroredSession(project, buildTwo, '1.1.0');

    const clusters = await errorClusters(project);
    expect(clusters).toHaveLength(1);
    expect(clusters[0]).toMatchObject({
      id: before.id,
      fingerprint: before.fingerprint,
      occurrences: 3,
      sessions: 3,
    });
    expect(clusters[0].releases.sort()).toEqual(['1.0.0', '1.1.0']);

    const error = await sessionError(project, mapped);
    expect(error.details.frames.slice(0, 2)).toMatchObject([
      { mapped: true, file: 'src/checkout.ts', line: THROW_LINE, function: 'validate' },
      { mapped: true, file: 'src/checkout.ts', line: CALL_LINE, function: 'checkout' },
    ]);
    expect(error.details.frames[0].context.line).toContain("throw new TypeError('cart has no items')");
    expect(error.details.frames[0].generated).toMatchObject({ file: URL_OF_BUNDLE, line: 1 });

    // The cluster shows its newest occurrence: the second build's session, its original frames.
    const latest = (await issueDetail(project, before.id)).latestError;
    expect(latest).toMatchObject({
      sessionId: secondBuild,
      name: 'TypeError',
      message: 'cart has no items',
      stack: sentStacks.get(secondBuild),
    });
    // The second build's source starts with its four padding lines.
    expect(latest.frames.slice(0, 2)).toMatchObject([
      { mapped: true, file: 'src/checkout.ts', line: THROW_LINE + 4, function: 'validate' },
      { mapped: true, file: 'src/checkout.ts', line: CALL_LINE + 4, function: 'checkout' },
    ]);
    expect(latest.frames[0].context.line).toContain("throw new TypeError('cart has no items')");
    expect(latest.frames[0].context.before.length).toBeGreaterThan(0);
    expect(latest.frames[0].generated).toMatchObject({ file: URL_OF_BUNDLE, line: 1 });
    expect(latest.frames).toEqual((await sessionError(project, secondBuild)).details.frames);

    // A third build, first seen with its map already there: found by the symbolicated fingerprint.
    const buildThree = await buildCheckout({ name: 'main.js', debugId: true, padding: 9 });
    await upload(project, buildThree, '1.2.0');
    await erroredSession(project, buildThree, '1.2.0');
    expect((await errorClusters(project)).map((cluster) => [cluster.id, cluster.occurrences])).toEqual([
      [before.id, 4],
    ]);
  });
});
