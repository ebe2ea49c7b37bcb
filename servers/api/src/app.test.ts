import { Writable } from 'node:stream';
import { DEFAULT_THRESHOLDS } from '@svc/detectors';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../test/test-app.ts';
import { ENGINES } from '../test/test-database.ts';
import { createApiTokenRecord } from './modules/projects/api-tokens.ts';

describe.each(ENGINES)('app on %s', (engine) => {
  let test: TestApp;
  beforeAll(async () => {
    test = await createTestApp(engine);
  });
  afterAll(async () => {
    await test?.close();
  });

  describe('probes', () => {
    it('answers /healthz and /readyz', async () => {
      expect((await test.app.inject('/healthz')).json()).toEqual({ status: 'ok' });
      const ready = await test.app.inject('/readyz');
      expect(ready.statusCode).toBe(200);
      expect(ready.json()).toEqual({ status: 'ok', database: 'ok', blobStore: 'ok' });
    });
  });

  describe('errors', () => {
    it('answers router errors (malformed URL, over-long path parameter) as { error, code: invalid }', async () => {
      const long = await test.app.inject({
        url: `/v1/projects/${'a'.repeat(200)}`,
        method: 'PATCH',
        headers: test.first.headers,
      });
      expect(long.statusCode).toBe(414);
      expect(long.json()).toEqual({ error: 'A path parameter is too long', code: 'invalid' });
      const malformed = await test.app.inject({
        url: '/v1/projects/%E0%A4%A',
        method: 'PATCH',
        headers: test.first.headers,
      });
      expect(malformed.statusCode).toBe(400);
      expect(malformed.json()).toEqual({ error: 'The URL is malformed', code: 'invalid' });
    });

    it('answers an unknown route with { error, code: not_found }', async () => {
      const response = await test.app.inject('/v1/nothing-here?x=1');
      expect(response.statusCode).toBe(404);
      expect(response.json()).toEqual({ error: 'No route GET /v1/nothing-here', code: 'not_found' });
    });
  });

  describe('API token authentication', () => {
    it('refuses a missing, malformed or unknown token with 401 unauthorized', async () => {
      for (const authorization of [undefined, 'Basic abc', 'Bearer', 'Bearer svc_not-a-real-token']) {
        const response = await test.app.inject({
          url: '/v1/projects/current',
          headers: authorization === undefined ? {} : { authorization },
        });
        expect(response.statusCode).toBe(401);
        expect(response.json()).toMatchObject({ code: 'unauthorized', error: expect.any(String) });
      }
    });

    it('refuses a revoked token', async () => {
      const { id, token } = await createApiTokenRecord(test.database.database, {
        projectId: test.first.project.id,
        name: 'to revoke',
      });
      const headers = { authorization: `Bearer ${token}` };
      expect((await test.app.inject({ url: '/v1/projects/current', headers })).statusCode).toBe(200);
      await test.database.database
        .updateTable('api_tokens')
        .set({ revoked_at: new Date() })
        .where('id', '=', id)
        .execute();
      expect((await test.app.inject({ url: '/v1/projects/current', headers })).statusCode).toBe(401);
    });

    it('never stores a token in the clear', async () => {
      const rows = await test.database.database.selectFrom('api_tokens').selectAll().execute();
      const stored = JSON.stringify(
        rows.map((row) => ({ ...row, token_hash: Buffer.from(row.token_hash).toString('hex') })),
      );
      expect(stored).not.toContain(test.first.apiToken);
    });
  });

  describe('projects', () => {
    it('returns the project bound to the token, with complete default settings', async () => {
      const response = await test.app.inject({ url: '/v1/projects/current', headers: test.first.headers });
      expect(response.statusCode).toBe(200);
      const project = response.json();
      expect(project).toMatchObject({
        id: test.first.project.id,
        projectKey: test.first.projectKey,
        settings: {
          webrtc: { enabled: false, sampleIntervalSec: 5 },
          allowedOrigins: [],
          detectorThresholds: {},
        },
      });
      expect(project.id).toMatch(/^proj_[0-9A-HJKMNP-TV-Z]{26}$/);
    });

    it('updates settings with a partial patch and validates them', async () => {
      const url = `/v1/projects/${test.first.project.id}`;
      const patched = await test.app.inject({
        method: 'PATCH',
        url,
        headers: test.first.headers,
        payload: {
          settings: {
            webrtc: { enabled: true },
            detectorThresholds: { lossPct: 8 },
            allowedOrigins: ['https://app.example.com'],
          },
        },
      });
      expect(patched.statusCode).toBe(200);
      expect(patched.json().settings).toMatchObject({
        webrtc: { enabled: true, sampleIntervalSec: 5 },
        detectorThresholds: { lossPct: 8 },
        allowedOrigins: ['https://app.example.com'],
      });

      for (const settings of [
        { detectorThresholds: { lossPct: -1 } },
        { detectorThresholds: { noSuchThreshold: 1 } },
        { allowedOrigins: ['https://app.example.com/path'] },
        { webrtc: { sampleIntervalSec: 0 } },
        { unknownGroup: {} },
      ]) {
        const response = await test.app.inject({
          method: 'PATCH',
          url,
          headers: test.first.headers,
          payload: { settings },
        });
        expect(response.statusCode, JSON.stringify(settings)).toBe(400);
        expect(response.json().code).toBe('invalid');
      }
      const after = await test.app.inject({ url: '/v1/projects/current', headers: test.first.headers });
      expect(after.json().settings.detectorThresholds).toEqual({ lossPct: 8 });
    });

    it("never shows or changes another project's data: another id is not found", async () => {
      const other = await test.createProject('Other');
      const response = await test.app.inject({
        method: 'PATCH',
        url: `/v1/projects/${other.project.id}`,
        headers: test.first.headers,
        payload: { name: 'Hijacked' },
      });
      expect(response.statusCode).toBe(404);
      expect(response.json().code).toBe('not_found');
      const otherView = await test.app.inject({ url: '/v1/projects/current', headers: other.headers });
      expect(otherView.json()).toMatchObject({ id: other.project.id, name: 'Other' });
    });
  });

  describe('GET /v1/config', () => {
    it('serves the SDK configuration by project key, cacheable for 60 s, with every threshold', async () => {
      const other = await test.createProject('Config');
      await test.app.inject({
        method: 'PATCH',
        url: `/v1/projects/${other.project.id}`,
        headers: other.headers,
        payload: { settings: { webrtc: { enabled: true }, detectorThresholds: { rttMs: 250 } } },
      });
      const response = await test.app.inject(`/v1/config?key=${other.projectKey}&sdk=browser@0.1.0`);
      expect(response.statusCode).toBe(200);
      expect(response.headers['cache-control']).toBe('public, max-age=60');
      expect(response.headers['access-control-allow-origin']).toBe('*');
      const config = response.json();
      expect(config.projectId).toBe(other.project.id);
      expect(config.webrtc.enabled).toBe(true);
      expect(config.detectorThresholds).toEqual({ ...DEFAULT_THRESHOLDS, rttMs: 250 });

      // A change through this server applies at once; one made elsewhere (another process, the
      // CLI) is seen within the 60 s cache.
      await test.app.inject({
        method: 'PATCH',
        url: `/v1/projects/${other.project.id}`,
        headers: other.headers,
        payload: { settings: { webrtc: { enabled: false } } },
      });
      expect((await test.app.inject(`/v1/config?key=${other.projectKey}`)).json().webrtc.enabled).toBe(false);
      await test.database.database
        .updateTable('projects')
        .set({ settings: JSON.stringify({ webrtc: { enabled: true } }) })
        .where('id', '=', other.project.id)
        .execute();
      expect((await test.app.inject(`/v1/config?key=${other.projectKey}`)).json().webrtc.enabled).toBe(false);
    });

    it('refuses an unknown or missing key', async () => {
      const unknown = await test.app.inject('/v1/config?key=pk_nope');
      expect(unknown.statusCode).toBe(401);
      expect(unknown.json().code).toBe('unauthorized');
      const missing = await test.app.inject('/v1/config');
      expect(missing.statusCode).toBe(400);
      expect(missing.json().code).toBe('invalid');
    });
  });

  describe('OpenAPI', () => {
    it('documents the routes from the same zod schemas', async () => {
      const document = (await test.app.inject('/openapi.json')).json();
      expect(document.openapi).toMatch(/^3\./);
      expect(Object.keys(document.paths)).toEqual(
        expect.arrayContaining([
          '/v1/config',
          '/v1/projects/current',
          '/v1/projects/{id}',
          '/v1/issues',
          '/v1/issues/{id}',
          '/v1/issues/{id}/sessions',
          '/v1/errors/{fingerprint}',
          '/v1/notifications/rules',
          '/v1/notifications/channels/{id}/rotate-secret',
          '/v1/notifications/deliveries/{id}/replay',
          '/v1/inbox/{id}/ack',
        ]),
      );
      // The rule body's source is documented as the union it is.
      const ruleBody =
        document.paths['/v1/notifications/rules'].post.requestBody.content['application/json'].schema;
      expect(JSON.stringify(ruleBody)).toContain('cluster.threshold');
      expect(document.paths['/v1/projects/current'].get.responses['200']).toBeDefined();
    });
  });
});

describe('request logs', () => {
  it('writes one line per request, after the answer, with share tokens redacted', async () => {
    const lines: Array<Record<string, unknown>> = [];
    const stream = new Writable({
      write(chunk, _encoding, done) {
        for (const line of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(line));
        done();
      },
    });
    const test = await createTestApp('pglite', { logger: { level: 'info', stream } });
    try {
      lines.length = 0;
      await test.app.inject('/healthz');
      await test.app.inject('/share/shr_secret-token-value/chunks/0?x=1');
      // The router ignores doubled and trailing slashes: the log must too.
      await test.app.inject('//share//shr_secret-token-value/');
      await test.app.inject({ url: '/v1/projects/current', headers: test.first.headers });
      const requests = lines.filter((line) => line.msg !== undefined && line.reqId !== undefined);
      expect(requests.map((line) => [line.msg, line.method, line.url, line.statusCode])).toEqual([
        ['request completed', 'GET', '/healthz', 200],
        ['request completed', 'GET', '/share/[token]/chunks/0?x=1', 404],
        ['request completed', 'GET', '/share/[token]/', 404],
        ['request completed', 'GET', '/v1/projects/current', 200],
      ]);
      for (const line of requests) expect(line.responseTime).toBeTypeOf('number');
      expect(JSON.stringify(lines)).not.toContain('secret-token-value');
      expect(JSON.stringify(lines)).not.toContain(test.first.apiToken);
    } finally {
      await test.close();
    }
  });
});
