import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Json } from '../../../test/http.ts';
import { createTestApp, type TestApp, type TestProject } from '../../../test/test-app.ts';
import { ENGINES } from '../../../test/test-database.ts';
import { createApiTokenRecord } from '../projects/api-tokens.ts';
import {
  type BuiltBundle,
  buildCheckout,
  CALL_LINE,
  CHECKOUT_SOURCE,
  stackOf,
  THROW_LINE,
} from './sourcemaps.fixture.ts';

const ORIGIN = 'https://shop.example.com';

let withId: BuiltBundle;
let otherBuild: BuiltBundle;
let legacy: BuiltBundle;
beforeAll(async () => {
  withId = await buildCheckout({ name: 'main.js', debugId: true });
  otherBuild = await buildCheckout({ name: 'main.js', debugId: true, padding: 3 });
  legacy = await buildCheckout({ name: 'legacy.js' });
});

describe.each(ENGINES)('source maps and symbolication, on %s', (engine) => {
  let test: TestApp;
  let base: string;

  beforeAll(async () => {
    test = await createTestApp(engine);
    base = await test.app.listen({ host: '127.0.0.1', port: 0 });
  });
  afterAll(async () => {
    await test?.close();
  });

  async function upload(
    project: TestProject,
    files: { name: string; content: string | Uint8Array }[],
    fields: Record<string, string> = {},
  ) {
    const form = new FormData();
    for (const [name, value] of Object.entries(fields)) form.append(name, value);
    for (const file of files) form.append('file', new Blob([file.content]), file.name);
    const response = await fetch(`${base}/v1/sourcemaps`, {
      method: 'POST',
      headers: project.headers,
      body: form,
    });
    return { status: response.status, body: (await response.json()) as Json };
  }

  async function symbolicate(project: TestProject, body: object) {
    const response = await test.app.inject({
      method: 'POST',
      url: '/v1/symbolicate',
      headers: project.headers,
      payload: body,
    });
    expect(response.statusCode).toBe(200);
    return response.json().frames;
  }

  it('symbolicates a real stack through a map uploaded by debug id', async () => {
    const uploaded = await upload(
      test.first,
      [
        { name: 'main.js', content: withId.code },
        { name: 'main.js.map', content: withId.map },
      ],
      { urlPrefix: '~/static/js/' },
    );
    expect(uploaded.status).toBe(201);
    expect(uploaded.body.items).toEqual([
      expect.objectContaining({ url: '~/static/js/main.js', kind: 'bundle', debugId: withId.debugId }),
      expect.objectContaining({ url: '~/static/js/main.js.map', kind: 'map', debugId: withId.debugId }),
    ]);

    const stack = stackOf(withId, `${ORIGIN}/static/js/main.js`);
    const frames = await symbolicate(test.first, { stack });
    expect(frames[0]).toMatchObject({
      mapped: true,
      file: 'src/checkout.ts',
      line: THROW_LINE,
      function: 'validate',
      generated: { file: `${ORIGIN}/static/js/main.js`, line: 1 },
    });
    expect(frames[0].context.line).toBe(CHECKOUT_SOURCE.split('\n')[THROW_LINE - 1]);
    expect(frames[0].context.before).toHaveLength(5);
    expect(frames[1]).toMatchObject({
      mapped: true,
      file: 'src/checkout.ts',
      line: CALL_LINE,
      function: 'checkout',
    });

    // The same frame by query string, and as frames.
    const top = frames[0].generated;
    const query = new URLSearchParams({ file: top.file, line: String(top.line), column: String(top.column) });
    const byQuery = await test.app.inject({
      method: 'GET',
      url: `/v1/symbolicate?${query}`,
      headers: test.first.headers,
    });
    expect(byQuery.json().frames[0]).toMatchObject({ mapped: true, line: THROW_LINE });
    const asFrames = await symbolicate(test.first, {
      frames: [top, { file: `${ORIGIN}/nowhere.js`, line: 1, column: 1 }],
    });
    expect(asFrames[0]).toMatchObject({ mapped: true, line: THROW_LINE });
    expect(asFrames[1]).toEqual({ mapped: false, file: `${ORIGIN}/nowhere.js`, line: 1, column: 1 });

    const listed = await test.app.inject({
      method: 'GET',
      url: '/v1/sourcemaps?limit=1',
      headers: test.first.headers,
    });
    expect(listed.json().items).toHaveLength(1);
    expect(listed.json().nextCursor).toEqual(expect.any(String));
  });

  it('symbolicates through a map uploaded by release and URL', async () => {
    const uploaded = await upload(
      test.first,
      [
        { name: 'legacy.js', content: legacy.code },
        { name: 'legacy.js.map', content: legacy.map },
      ],
      { release: 'shop@1.2.3', urlPrefix: '~/static/js/' },
    );
    expect(uploaded.status).toBe(201);
    const stack = stackOf(legacy, `${ORIGIN}/static/js/legacy.js?v=3`);
    const frames = await symbolicate(test.first, { release: 'shop@1.2.3', stack });
    expect(frames[0]).toMatchObject({
      mapped: true,
      file: 'src/checkout.ts',
      line: THROW_LINE,
      function: 'validate',
    });
    // Another release has no map at that URL.
    const other = await symbolicate(test.first, { release: 'shop@9', stack });
    expect(other[0].mapped).toBe(false);

    const listed = await test.app.inject({
      method: 'GET',
      url: '/v1/sourcemaps?release=shop@1.2.3',
      headers: test.first.headers,
    });
    expect(
      listed
        .json()
        .items.map((item: { url: string }) => item.url)
        .sort(),
    ).toEqual(['~/static/js/legacy.js', '~/static/js/legacy.js.map']);
  });

  it('keeps the folders of a file name in its URL, and refuses a name that leaves the prefix', async () => {
    const project = await test.createProject('Folders');
    const uploaded = await upload(
      project,
      [
        { name: 'static/js/main.js', content: withId.code },
        { name: 'static/js/main.js.map', content: withId.map },
      ],
      { urlPrefix: '~/' },
    );
    expect(uploaded.status).toBe(201);
    expect(uploaded.body.items.map((item: { url: string }) => item.url)).toEqual([
      '~/static/js/main.js',
      '~/static/js/main.js.map',
    ]);
    const frames = await symbolicate(project, { stack: stackOf(withId, `${ORIGIN}/static/js/main.js`) });
    expect(frames[0]).toMatchObject({ mapped: true, line: THROW_LINE });

    for (const name of ['../main.js', '/etc/main.js', 'static//main.js']) {
      const refused = await upload(project, [{ name, content: withId.code }]);
      expect(refused.status, name).toBe(400);
      expect(refused.body).toEqual({
        error: expect.stringContaining('not a plain relative file name'),
        code: 'invalid',
      });
    }
  });

  it('never uses the map of another build', async () => {
    const project = await test.createProject('Other build');
    // The bundle of one build, the map of another, at the same release and URL.
    const uploaded = await upload(
      project,
      [
        { name: 'main.js', content: withId.code },
        { name: 'main.js.map', content: otherBuild.map },
      ],
      { release: 'r1', urlPrefix: '~/static/js/' },
    );
    expect(uploaded.status).toBe(201);
    const frames = await symbolicate(project, {
      release: 'r1',
      stack: stackOf(withId, `${ORIGIN}/static/js/main.js`),
    });
    expect(frames[0].mapped).toBe(false);
    expect(frames[0].file).toBe(`${ORIGIN}/static/js/main.js`);
  });

  it('refuses a file over the limit with 413 and stores nothing', async () => {
    const project = await test.createProject('Too large');
    const huge = new Uint8Array(17 * 1024 * 1024).fill(0x20);
    const refused = await upload(project, [
      { name: 'main.js.map', content: withId.map },
      { name: 'huge.js', content: huge },
    ]);
    expect(refused.status).toBe(413);
    expect(refused.body).toEqual({ error: expect.stringContaining('over'), code: 'invalid' });
    const listed = await test.app.inject({ method: 'GET', url: '/v1/sourcemaps', headers: project.headers });
    expect(listed.json().items).toEqual([]);
    const blobs = await readdir(join(test.dataDirectory, 'blobs', 'sourcemaps', project.project.id)).catch(
      () => [],
    );
    expect(blobs).toEqual([]);
  });

  it('refuses a garbage map with 400 and stores nothing', async () => {
    const project = await test.createProject('Garbage');
    for (const content of [
      'not json',
      '{"version":2,"mappings":"","sources":[]}',
      '{"version":3,"sources":[],"mappings":"!!!"}',
    ]) {
      const refused = await upload(project, [
        { name: 'main.js', content: withId.code },
        { name: 'main.js.map', content },
      ]);
      expect(refused.status).toBe(400);
      expect(refused.body).toEqual({ error: expect.stringContaining('main.js.map'), code: 'invalid' });
    }
    const listed = await test.app.inject({ method: 'GET', url: '/v1/sourcemaps', headers: project.headers });
    expect(listed.json().items).toEqual([]);
  });

  it('answers 403 to a token without the scope', async () => {
    const { token } = await createApiTokenRecord(test.database.database, {
      projectId: test.first.project.id,
      name: 'read only',
      scopes: ['sourcemaps:read'],
    });
    const reader = { ...test.first, headers: { authorization: `Bearer ${token}` } };
    expect((await upload(reader, [{ name: 'main.js', content: withId.code }])).status).toBe(403);
    const { token: other } = await createApiTokenRecord(test.database.database, {
      projectId: test.first.project.id,
      name: 'sessions only',
      scopes: ['sessions:read'],
    });
    const response = await test.app.inject({
      method: 'POST',
      url: '/v1/symbolicate',
      headers: { authorization: `Bearer ${other}` },
      payload: { stack: 'Error\n    at a (https://x.example/a.js:1:1)' },
    });
    expect(response.statusCode).toBe(403);
  });
});
