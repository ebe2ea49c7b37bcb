import { createHash } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { parseChunk } from '@svc/protocol';
import { sql } from 'kysely';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { expectJson } from '../../../test/http.ts';
import { newSessionId, postChunk, rewriteChunk, validChunkFixture } from '../../../test/ingest-helpers.ts';
import { createTestApp, type TestApp, type TestProject } from '../../../test/test-app.ts';
import { ENGINES } from '../../../test/test-database.ts';
import { createDestinationPolicy, parseAllowedHosts } from '../../platform/http/destination-policy.ts';
import { summarizeChunk } from '../sessions/chunk-summary.ts';
import { recordChunks } from '../sessions/ingest-repository.ts';
import { type AssetDependencies, archiveSessionAssets, createAssetWorker } from './index.ts';

// Archived assets against a real "site" on 127.0.0.1 (node:http): a session recorded through
// ingest with a full snapshot referencing the site's stylesheet, archived, then the site changes
// and deletes the stylesheet, and the archive still answers with what the session saw.

/** The site: its files by path (`undefined`: 404), and how often each path was asked for. */
interface Site {
  files: Map<string, { type: string; body: Buffer | (() => AsyncIterable<Buffer>) }>;
  requests: Map<string, number>;
  origin: string;
  server: Server;
}

async function startSite(): Promise<Site> {
  const files: Site['files'] = new Map();
  const requests = new Map<string, number>();
  const server = createServer((request, response) => {
    const path = request.url ?? '/';
    requests.set(path, (requests.get(path) ?? 0) + 1);
    const file = files.get(path);
    if (file === undefined) {
      response.writeHead(404, { 'content-type': 'text/plain' }).end('gone');
      return;
    }
    if (Buffer.isBuffer(file.body)) {
      response.writeHead(200, { 'content-type': file.type }).end(file.body);
      return;
    }
    // Streamed without a Content-Length: the limit must hold while it arrives.
    response.writeHead(200, { 'content-type': file.type });
    const body = file.body;
    void (async () => {
      try {
        for await (const part of body())
          if (!response.write(part)) await new Promise((r) => response.once('drain', r));
        response.end();
      } catch {
        response.destroy();
      }
    })();
    response.on('close', () => undefined);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { files, requests, origin: `http://127.0.0.1:${port}`, server };
}

const sha256 = (text: string | Buffer) => createHash('sha256').update(text).digest('hex');

describe.each(ENGINES)('archived assets on %s', (engine) => {
  let test: TestApp;
  let site: Site;
  let dependencies: AssetDependencies;

  beforeAll(async () => {
    test = await createTestApp(engine);
    site = await startSite();
    dependencies = {
      ...test.processingDependencies,
      // As webhooks in tests: the site listens on 127.0.0.1, which the default policy refuses.
      policy: createDestinationPolicy(parseAllowedHosts('127.0.0.1').allowed),
      timeoutMs: 5_000,
    };
  });
  afterAll(async () => {
    await new Promise((resolve) => site?.server.close(resolve));
    await test?.close();
  });
  beforeEach(() => {
    site.files.clear();
    site.requests.clear();
  });

  async function allowOrigins(project: TestProject, origins: string[], assets = {}) {
    await sql`update projects set settings = jsonb_set(jsonb_set(coalesce(settings, '{}'::jsonb), '{allowedOrigins}', ${JSON.stringify(origins)}::jsonb), '{assets}', ${JSON.stringify({ archiveFonts: false, archiveImages: false, ...assets })}::jsonb) where id = ${project.project.id}`.execute(
      test.database.database,
    );
  }

  /** A session recorded through ingest whose full snapshot links `stylesheets` and shows `images`. */
  async function recordSession(
    project: TestProject,
    page: { stylesheets: string[]; images?: string[]; inlineCss?: string },
  ): Promise<string> {
    const sessionId = newSessionId();
    const fixture = JSON.parse((await validChunkFixture('recording-seq-0')).toString('utf8')) as {
      meta: Record<string, unknown>;
      sentAt: number;
    };
    const t = fixture.sentAt - 1000;
    let id = 1;
    const element = (tagName: string, attributes: Record<string, string>, childNodes: unknown[] = []) => ({
      type: 2,
      tagName,
      attributes,
      childNodes,
      id: id++,
    });
    const head = [
      ...page.stylesheets.map((href) => element('link', { rel: 'stylesheet', href })),
      ...(page.inlineCss === undefined
        ? []
        : [element('style', {}, [{ type: 3, textContent: page.inlineCss, isStyle: true, id: id++ }])]),
    ];
    const body = [
      element('h1', { class: 'title' }, [{ type: 3, textContent: '*****', id: id++ }]),
      ...(page.images ?? []).map((src) => element('img', { src })),
    ];
    const node = {
      type: 0,
      childNodes: [element('html', {}, [element('head', {}, head), element('body', {}, body)])],
      id: id++,
    };
    const chunk = rewriteChunk(await validChunkFixture('recording-seq-0'), {
      sessionId,
      seq: 0,
      meta: { ...fixture.meta, url: `${site.origin}/shop` },
      events: [
        {
          t,
          type: 'rrweb',
          data: { type: 4, data: { href: `${site.origin}/shop`, width: 800, height: 600 }, timestamp: t },
        },
        {
          t: t + 1,
          type: 'rrweb',
          data: { type: 2, data: { node, initialOffset: { top: 0, left: 0 } }, timestamp: t + 1 },
        },
      ],
    });
    expectJson(await postChunk(test.app, project.projectKey, chunk), 200);
    return sessionId;
  }

  async function assetMap(project: TestProject, sessionId: string) {
    return expectJson(
      await test.app.inject({ url: `/v1/sessions/${sessionId}/assets`, headers: project.headers }),
      200,
    ) as { assets: Array<Record<string, unknown>> };
  }

  it('archives the linked stylesheet and serves it after the site changed and deleted it', async () => {
    const project = await test.createProject('Shop');
    await allowOrigins(project, [site.origin]);
    const original = 'h1.title { color: rgb(200, 0, 0); }';
    site.files.set('/site.css', { type: 'text/css; charset=utf-8', body: Buffer.from(original) });
    const sessionId = await recordSession(project, { stylesheets: [`${site.origin}/site.css`] });

    expect(await assetMap(project, sessionId)).toEqual({ assets: [] });
    const result = await archiveSessionAssets(dependencies, project.project.id, sessionId);
    expect(result).toMatchObject({ chunksRead: 1, references: 1, fetched: 1, reused: 0, failed: 0 });

    // The site changes its stylesheet, then deletes it.
    site.files.set('/site.css', { type: 'text/css', body: Buffer.from('h1.title { color: blue; }') });
    site.files.delete('/site.css');
    expect(await (await fetch(`${site.origin}/site.css`)).status).toBe(404);

    const map = await assetMap(project, sessionId);
    expect(map.assets).toEqual([
      {
        url: `${site.origin}/site.css`,
        kind: 'stylesheet',
        archivedUrl: `/v1/assets/${sha256(original)}`,
        contentType: 'text/css',
        bytes: Buffer.byteLength(original),
        sha256: sha256(original),
        status: 'archived',
        error: null,
        fetchedAt: expect.any(String),
      },
    ]);
    const served = await test.app.inject({ url: `/v1/assets/${sha256(original)}`, headers: project.headers });
    expect(served.statusCode).toBe(200);
    expect(served.body).toBe(original);
    expect(served.headers['content-type']).toBe('text/css; charset=utf-8');
    expect(served.headers['cache-control']).toContain('immutable');

    // Archiving again reads no chunk twice and fetches nothing.
    expect(await archiveSessionAssets(dependencies, project.project.id, sessionId)).toMatchObject({
      chunksRead: 0,
      fetched: 0,
    });
  });

  it('fetches a URL once for many sessions, and stores equal contents once', async () => {
    const project = await test.createProject('Many sessions');
    await allowOrigins(project, [site.origin]);
    site.files.set('/a.css', { type: 'text/css', body: Buffer.from('body { margin: 0 }') });
    site.files.set('/copy-of-a.css', { type: 'text/css', body: Buffer.from('body { margin: 0 }') });
    const first = await recordSession(project, { stylesheets: [`${site.origin}/a.css`] });
    const second = await recordSession(project, {
      stylesheets: [`${site.origin}/a.css`, `${site.origin}/copy-of-a.css`],
    });
    expect(await archiveSessionAssets(dependencies, project.project.id, first)).toMatchObject({ fetched: 1 });
    expect(await archiveSessionAssets(dependencies, project.project.id, second)).toMatchObject({
      fetched: 1,
      reused: 1,
    });
    expect(site.requests.get('/a.css')).toBe(1);
    const maps = [await assetMap(project, first), await assetMap(project, second)];
    const hashes = new Set(maps.flatMap((map) => map.assets.map((asset) => asset.sha256)));
    expect(hashes).toEqual(new Set([sha256('body { margin: 0 }')]));
  });

  it('follows @import and, by the settings, fonts and images, rewriting the served CSS to them', async () => {
    const project = await test.createProject('Fonts');
    await allowOrigins(project, [site.origin], { archiveFonts: true, archiveImages: true });
    const font = Buffer.from('wOF2-not-really-a-font');
    const image = Buffer.from('\x89PNG-ish');
    const css =
      "@import 'parts/base.css'; @font-face { font-family: Shop; src: url(fonts/shop.woff2) format('woff2') } h1 { background: url(\"/img/bg.png\") }";
    site.files.set('/css/site.css', { type: 'text/css', body: Buffer.from(css) });
    site.files.set('/css/parts/base.css', { type: 'text/css', body: Buffer.from('p { color: green }') });
    site.files.set('/css/fonts/shop.woff2', { type: 'font/woff2', body: font });
    site.files.set('/img/bg.png', { type: 'image/png', body: image });
    site.files.set('/img/logo.png', { type: 'image/png', body: image });
    const sessionId = await recordSession(project, {
      stylesheets: [`${site.origin}/css/site.css`],
      images: [`${site.origin}/img/logo.png`],
    });
    const result = await archiveSessionAssets(dependencies, project.project.id, sessionId);
    expect(result).toMatchObject({ fetched: 5, failed: 0 });
    const map = await assetMap(project, sessionId);
    const byUrl = new Map(map.assets.map((asset) => [asset.url, asset]));
    expect(byUrl.get(`${site.origin}/css/fonts/shop.woff2`)).toMatchObject({
      kind: 'font',
      contentType: 'font/woff2',
      status: 'archived',
    });
    expect(byUrl.get(`${site.origin}/css/parts/base.css`)).toMatchObject({
      kind: 'stylesheet',
      status: 'archived',
    });
    expect(byUrl.get(`${site.origin}/img/logo.png`)).toMatchObject({ kind: 'image', sha256: sha256(image) });

    const served = await test.app.inject({ url: `/v1/assets/${sha256(css)}`, headers: project.headers });
    expect(served.body).toBe(
      `@import "/v1/assets/${sha256('p { color: green }')}"; @font-face { font-family: Shop; src: url("/v1/assets/${sha256(font)}") format('woff2') } h1 { background: url("/v1/assets/${sha256(image)}") }`,
    );
    const fontServed = await test.app.inject({ url: `/v1/assets/${sha256(font)}`, headers: project.headers });
    expect(fontServed.headers['content-type']).toBe('font/woff2');
    expect(fontServed.rawPayload.equals(font)).toBe(true);
  });

  it('leaves fonts and images alone by default', async () => {
    const project = await test.createProject('Defaults');
    await allowOrigins(project, [site.origin]);
    site.files.set('/d.css', { type: 'text/css', body: Buffer.from('@font-face { src: url(f.woff2) }') });
    const sessionId = await recordSession(project, {
      stylesheets: [`${site.origin}/d.css`],
      images: [`${site.origin}/logo.png`],
    });
    await archiveSessionAssets(dependencies, project.project.id, sessionId);
    expect((await assetMap(project, sessionId)).assets.map((asset) => asset.url)).toEqual([
      `${site.origin}/d.css`,
    ]);
    expect(site.requests.get('/f.woff2')).toBeUndefined();
  });

  it('refuses origins the project does not allow, and private addresses under the default policy', async () => {
    const project = await test.createProject('Policy');
    site.files.set('/p.css', { type: 'text/css', body: Buffer.from('p {}') });
    // No allowed origins: nothing is fetched.
    const unlisted = await recordSession(project, { stylesheets: [`${site.origin}/p.css`] });
    await archiveSessionAssets(dependencies, project.project.id, unlisted);
    expect((await assetMap(project, unlisted)).assets).toEqual([
      expect.objectContaining({
        status: 'refused',
        error: `${site.origin} is not one of the project's allowed origins`,
      }),
    ]);
    // Allowed origin, but the default policy refuses loopback addresses.
    await allowOrigins(project, [site.origin]);
    const loopback = await recordSession(project, { stylesheets: [`${site.origin}/p.css`] });
    await archiveSessionAssets(
      { ...dependencies, policy: createDestinationPolicy() },
      project.project.id,
      loopback,
    );
    const [asset] = (await assetMap(project, loopback)).assets;
    expect(asset).toMatchObject({ status: 'refused', archivedUrl: null });
    expect(asset?.error).toContain('loopback');
    expect(site.requests.get('/p.css')).toBeUndefined();
  });

  it('refuses an oversized stylesheet while it streams, a wrong content type and a 404, and records them', async () => {
    const project = await test.createProject('Limits');
    await allowOrigins(project, [site.origin]);
    let sent = 0;
    site.files.set('/huge.css', {
      type: 'text/css',
      body: async function* () {
        const part = Buffer.alloc(64 * 1024, 0x20);
        // Far more than the 2 MiB limit, unless the reader stops.
        for (let index = 0; index < 1024; index++) {
          sent += part.length;
          yield part;
        }
      },
    });
    site.files.set('/page.css', { type: 'text/html', body: Buffer.from('<html>') });
    const sessionId = await recordSession(project, {
      stylesheets: [`${site.origin}/huge.css`, `${site.origin}/page.css`, `${site.origin}/missing.css`],
    });
    const result = await archiveSessionAssets(dependencies, project.project.id, sessionId);
    expect(result).toMatchObject({ fetched: 0, failed: 3 });
    const errors = Object.fromEntries(
      (await assetMap(project, sessionId)).assets.map((asset) => [asset.url, [asset.status, asset.error]]),
    );
    expect(errors).toEqual({
      [`${site.origin}/huge.css`]: ['failed', 'larger than 2097152 bytes'],
      [`${site.origin}/page.css`]: ['failed', `Content-Type "text/html" is not a stylesheet's`],
      [`${site.origin}/missing.css`]: ['failed', 'HTTP 404'],
    });
    expect(sent).toBeLessThan(16 * 1024 * 1024);
    // A failure is not retried within the day, by another session either.
    const again = await recordSession(project, { stylesheets: [`${site.origin}/missing.css`] });
    await archiveSessionAssets(dependencies, project.project.id, again);
    expect(site.requests.get('/missing.css')).toBe(1);
  });

  it("answers 404 for another project's session and content", async () => {
    const project = await test.createProject('Owner');
    const other = await test.createProject('Other');
    await allowOrigins(project, [site.origin]);
    site.files.set('/o.css', { type: 'text/css', body: Buffer.from('o {}') });
    const sessionId = await recordSession(project, { stylesheets: [`${site.origin}/o.css`] });
    await archiveSessionAssets(dependencies, project.project.id, sessionId);
    expect(
      (await test.app.inject({ url: `/v1/sessions/${sessionId}/assets`, headers: other.headers })).statusCode,
    ).toBe(404);
    expect(
      (await test.app.inject({ url: `/v1/assets/${sha256('o {}')}`, headers: other.headers })).statusCode,
    ).toBe(404);
    expect(
      (await test.app.inject({ url: `/v1/assets/${sha256('o {}')}`, headers: project.headers })).statusCode,
    ).toBe(200);
    expect((await test.app.inject({ url: `/v1/assets/${sha256('o {}')}` })).statusCode).toBe(401);
  });

  it("serves a shared session's assets through its share link, and only those", async () => {
    const project = await test.createProject('Shared');
    await allowOrigins(project, [site.origin]);
    site.files.set('/shared.css', { type: 'text/css', body: Buffer.from('s { color: red }') });
    site.files.set('/private.css', { type: 'text/css', body: Buffer.from('p { color: red }') });
    const shared = await recordSession(project, { stylesheets: [`${site.origin}/shared.css`] });
    const other = await recordSession(project, { stylesheets: [`${site.origin}/private.css`] });
    await archiveSessionAssets(dependencies, project.project.id, shared);
    await archiveSessionAssets(dependencies, project.project.id, other);
    const { token } = expectJson(
      await test.app.inject({
        method: 'POST',
        url: `/v1/sessions/${shared}/share`,
        headers: { ...project.headers, 'content-type': 'application/json' },
        payload: JSON.stringify({ expiresInHours: 1 }),
      }),
      201,
    ) as { token: string };
    const map = expectJson(await test.app.inject({ url: `/share/${token}/assets` }), 200) as {
      assets: Array<{ archivedUrl: string }>;
    };
    const archivedUrl = `/share/${token}/assets/${sha256('s { color: red }')}`;
    expect(map.assets.map((asset) => asset.archivedUrl)).toEqual([archivedUrl]);
    const served = await test.app.inject({ url: archivedUrl });
    expect(served.statusCode).toBe(200);
    expect(served.body).toBe('s { color: red }');
    expect(served.headers['cache-control']).toBe('no-store');
    // The project's other session's content is not reachable through this link.
    expect(
      (await test.app.inject({ url: `/share/${token}/assets/${sha256('p { color: red }')}` })).statusCode,
    ).toBe(404);
    expect((await test.app.inject({ url: `/share/not-a-token/assets` })).statusCode).toBe(404);
  });

  it('is queued by ingest for a chunk with a full snapshot, and run by the asset worker', async () => {
    const project = await test.createProject('Queued');
    const unlisted = await test.createProject('No origins');
    await allowOrigins(project, [site.origin]);
    site.files.set('/q.css', { type: 'text/css', body: Buffer.from('q { color: teal }') });
    const sessionId = await recordSession(project, { stylesheets: [`${site.origin}/q.css`] });
    // Without allowed origins nothing could be fetched: nothing is queued.
    const ignored = await recordSession(unlisted, { stylesheets: [`${site.origin}/q.css`] });
    const queued = async () =>
      (
        await test.database.database
          .selectFrom('asset_jobs')
          .select(['project_id', 'session_id'])
          .where('session_id', 'in', [sessionId, ignored])
          .execute()
      ).map((row) => row.session_id);
    expect(await queued()).toEqual([sessionId]);
    // The transaction path of the index (a batch with a session twice) queues it the same way;
    // a chunk without a full snapshot does not.
    const viaTransaction = newSessionId();
    const records = [1, 2].map((seq) => {
      const parsed = parseChunk({
        v: 1,
        sessionId: viaTransaction,
        seq,
        sentAt: Date.now(),
        events:
          seq === 1
            ? [
                {
                  t: Date.now(),
                  type: 'rrweb',
                  data: { type: 2, data: { node: { type: 0, childNodes: [], id: 1 } } },
                },
              ]
            : [{ t: Date.now(), type: 'custom', name: 'later' }],
      });
      if (!parsed.success) throw new Error(parsed.error.message);
      const summary = summarizeChunk(parsed.chunk, parsed.skipped);
      expect(summary.fullSnapshotCount).toBe(seq === 1 ? 1 : 0);
      return {
        projectId: project.project.id,
        chunk: parsed.chunk,
        summary,
        blobKey: `test/${viaTransaction}/${seq}`,
        contentSha256: new Uint8Array(32).fill(seq),
        encoding: 'json' as const,
        receivedBytes: 10,
        inflatedBytes: 10,
        storedBytes: 10,
      };
    });
    await test.database.database.transaction().execute((transaction) => recordChunks(transaction, records));
    const transactionJobs = await test.database.database
      .selectFrom('asset_jobs')
      .select('session_id')
      .where('session_id', '=', viaTransaction)
      .execute();
    expect(transactionJobs).toHaveLength(1);
    await test.database.database.deleteFrom('asset_jobs').where('session_id', '=', viaTransaction).execute();

    const worker = createAssetWorker(dependencies);
    expect(await worker.runUntilIdle()).toBeGreaterThanOrEqual(1);
    expect(await queued()).toEqual([]);
    expect(worker.stats()).toMatchObject({ failures: 0 });
    expect((await assetMap(project, sessionId)).assets).toEqual([
      expect.objectContaining({
        url: `${site.origin}/q.css`,
        status: 'archived',
        sha256: sha256('q { color: teal }'),
      }),
    ]);
  });

  it('gives up on a site that does not answer within the timeout', async () => {
    const project = await test.createProject('Slow');
    await allowOrigins(project, [site.origin]);
    site.files.set('/slow.css', {
      type: 'text/css',
      body: async function* () {
        yield Buffer.from('a {');
        await new Promise((resolve) => setTimeout(resolve, 3_000));
        yield Buffer.from('}');
      },
    });
    const sessionId = await recordSession(project, { stylesheets: [`${site.origin}/slow.css`] });
    const started = performance.now();
    await archiveSessionAssets({ ...dependencies, timeoutMs: 300 }, project.project.id, sessionId);
    expect(performance.now() - started).toBeLessThan(2_500);
    expect((await assetMap(project, sessionId)).assets).toEqual([
      expect.objectContaining({ status: 'failed', error: 'timed out after 300 ms', archivedUrl: null }),
    ]);
  });
});
