import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { expectJson } from '../../../test/http.ts';
import { type SeededSession, seedSession } from '../../../test/seed.ts';
import { createTestApp, type TestApp, type TestProject } from '../../../test/test-app.ts';
import { ENGINES } from '../../../test/test-database.ts';
import { hashSecret } from '../../platform/secrets.ts';
import { withoutEndUserIdentity } from './share-routes.ts';

const HOUR = 3_600_000;
const T0 = Date.UTC(2026, 0, 1);

describe.each(ENGINES)('share links on %s', (engine) => {
  let test: TestApp;
  let other: TestProject;
  let session: SeededSession;
  let sibling: SeededSession;
  let theirs: SeededSession;
  beforeAll(async () => {
    test = await createTestApp(engine);
    other = await test.createProject('other');
    session = await seedSession(test, test.first, { startedAt: T0, seqs: [0, 2] });
    sibling = await seedSession(test, test.first, { startedAt: T0 + HOUR, seqs: [0, 1] });
    theirs = await seedSession(test, other, { startedAt: T0, seqs: [0, 1] });
  });
  afterAll(async () => {
    await test?.close();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  async function share(sessionId: string, payload: unknown, project: TestProject = test.first) {
    return test.app.inject({
      method: 'POST',
      url: `/v1/sessions/${sessionId}/share`,
      headers: project.headers,
      payload: payload as Record<string, unknown>,
    });
  }

  async function createShare(sessionId: string, expiresInHours = 24, project: TestProject = test.first) {
    const response = await share(sessionId, { expiresInHours }, project);
    return expectJson<{ token: string; url: string; expiresAt: string }>(response, 201);
  }

  it('creates a link with a token, its URL and when it expires', async () => {
    const before = Date.now();
    const created = await createShare(session.id, 48);
    expect(created.token).toMatch(/^[0-9a-z]{50,}$/);
    expect(created.url).toBe(`${test.configuration.publicUrl}/share/${created.token}`);
    const expiresAt = Date.parse(created.expiresAt);
    expect(expiresAt).toBeGreaterThanOrEqual(before + 48 * HOUR);
    expect(expiresAt).toBeLessThanOrEqual(Date.now() + 48 * HOUR);
  });

  it('stores only the hash of the token', async () => {
    const created = await createShare(session.id);
    const rows = await test.database.database.selectFrom('share_links').selectAll().execute();
    const row = rows.find((candidate) => Buffer.from(candidate.token_hash).equals(hashSecret(created.token)));
    expect(row).toMatchObject({ project_id: test.first.project.id, session_id: session.id });
    expect(row?.id).toMatch(/^shr_/);
    const stored = JSON.stringify(
      rows.map((candidate) => ({
        ...candidate,
        token_hash: Buffer.from(candidate.token_hash).toString('hex'),
      })),
    );
    expect(stored).not.toContain(created.token);
  });

  it('serves the shared session without authentication, read-only, without who the end user is', async () => {
    const created = await createShare(session.id);
    const response = await test.app.inject({ url: `/share/${created.token}` });
    expect(response.statusCode).toBe(200);
    expect(response.headers['cache-control']).toBe('no-store');
    expect(response.headers['referrer-policy']).toBe('no-referrer');
    const shared = response.json();
    const detail = (
      await test.app.inject({ url: `/v1/sessions/${session.id}`, headers: test.first.headers })
    ).json();
    expect(detail.user?.email).toEqual(expect.any(String));
    const { user, ...publicDetail } = detail;
    expect(shared).toEqual({
      ...publicDetail,
      chunks: detail.chunks.map((chunk: { seq: number }) => ({
        ...chunk,
        url: `${test.configuration.publicUrl}/share/${created.token}/chunks/${chunk.seq}`,
      })),
      share: { expiresAt: created.expiresAt },
    });
    for (const chunk of session.chunks) {
      const chunkResponse = await test.app.inject({ url: `/share/${created.token}/chunks/${chunk.seq}` });
      expect(chunkResponse.statusCode).toBe(200);
      expect(chunkResponse.headers['content-type']).toMatch(/^application\/json/);
      expect(chunkResponse.body).toBe(withoutEndUserIdentity(Buffer.from(chunk.json)));
      expect(chunkResponse.body).not.toContain(user.email);
      expect(chunkResponse.json().events.some((event: { type: string }) => event.type === 'identify')).toBe(
        false,
      );
    }
    expect(response.body).not.toContain(user.email);
    for (const method of ['POST', 'PUT', 'PATCH', 'DELETE'] as const) {
      expect((await test.app.inject({ method, url: `/share/${created.token}` })).statusCode).toBe(404);
    }
  });

  it("answers a browser's navigation with the dashboard's share page and API clients with JSON", async () => {
    const created = await createShare(session.id);
    const navigation = 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8';
    for (const token of [created.token, 'unknown-token']) {
      const page = await test.app.inject({ url: `/share/${token}`, headers: { accept: navigation } });
      expect(page.statusCode).toBe(200);
      expect(page.headers['content-type']).toMatch(/^text\/html/);
      expect(page.headers['cache-control']).toBe('no-store');
      expect(page.headers['referrer-policy']).toBe('no-referrer');
      expect(page.headers['content-security-policy']).toContain("script-src 'self'");
      expect(page.body).toContain('<div id="root">');
      // The page is the app's shell: nothing of the session is in it.
      expect(page.body).not.toContain(session.id);
    }
    for (const accept of [
      'application/json',
      'application/json, text/html;q=0.5',
      '*/*',
      'text/html, application/json',
    ]) {
      const json = await test.app.inject({ url: `/share/${created.token}`, headers: { accept } });
      expect(json.statusCode, accept).toBe(200);
      expect(json.json().id, accept).toBe(session.id);
    }
    // A chunk is always JSON, and an unknown token's JSON is still the 404.
    const chunk = await test.app.inject({
      url: `/share/${created.token}/chunks/0`,
      headers: { accept: navigation },
    });
    expect(chunk.headers['content-type']).toMatch(/^application\/json/);
    const unknown = await test.app.inject({
      url: '/share/unknown-token',
      headers: { accept: 'application/json' },
    });
    expect(unknown.statusCode).toBe(404);
  });

  it('reaches only the shared session', async () => {
    const created = await createShare(session.id);
    // seq 1 exists in the sibling session and in the other project's, not in the shared one.
    const response = await test.app.inject({ url: `/share/${created.token}/chunks/1` });
    expect(response.statusCode).toBe(404);
    expect(response.json().code).toBe('not_found');
    const theirShare = await createShare(theirs.id, 1, other);
    const theirView = (await test.app.inject({ url: `/share/${theirShare.token}` })).json();
    expect(theirView.id).toBe(theirs.id);
    expect(theirView.id).not.toBe(sibling.id);
    const theirChunk = await test.app.inject({ url: `/share/${theirShare.token}/chunks/1` });
    expect(theirChunk.body).toBe(withoutEndUserIdentity(Buffer.from(theirs.chunks[1]?.json as Uint8Array)));
  });

  it('answers 404 for an unknown or malformed token', async () => {
    for (const url of [
      '/share/0000000000000000000000000000000000000000000000000000',
      '/share/nope',
      '/share/nope/chunks/0',
      '/share/..%2F..%2Fetc%2Fpasswd',
    ]) {
      const response = await test.app.inject({ url });
      expect(response.statusCode, url).toBe(404);
      expect(response.json().code).toBe('not_found');
    }
    // Longer than any token: refused before any lookup (Fastify's path parameter limit).
    expect((await test.app.inject({ url: `/share/${'a'.repeat(200)}` })).statusCode).toBe(414);
  });

  it('expires: a link past its expiresAt is a 404', async () => {
    const created = await createShare(session.id, 1);
    expect((await test.app.inject({ url: `/share/${created.token}` })).statusCode).toBe(200);
    await test.database.database
      .updateTable('share_links')
      .set({ expires_at: new Date(Date.now() - 1000) })
      .where('token_hash', '=', hashSecret(created.token))
      .execute();
    for (const url of [`/share/${created.token}`, `/share/${created.token}/chunks/0`]) {
      const response = await test.app.inject({ url });
      expect(response.statusCode, url).toBe(404);
      expect(response.json()).toEqual({
        error: 'This share link does not exist or has expired',
        code: 'not_found',
      });
    }
  });

  it('expires at exactly expiresInHours after creation (fake clock)', async () => {
    vi.useFakeTimers({ toFake: ['Date'], now: Date.now() });
    const created = await createShare(session.id, 1);
    vi.setSystemTime(Date.now() + HOUR - 1000);
    expect((await test.app.inject({ url: `/share/${created.token}` })).statusCode).toBe(200);
    expect((await test.app.inject({ url: `/share/${created.token}/chunks/2` })).statusCode).toBe(200);
    vi.setSystemTime(Date.now() + 1000);
    expect((await test.app.inject({ url: `/share/${created.token}` })).statusCode).toBe(404);
    expect((await test.app.inject({ url: `/share/${created.token}/chunks/2` })).statusCode).toBe(404);
  });

  it.each([
    [{ expiresInHours: 0 }],
    [{ expiresInHours: 721 }],
    [{ expiresInHours: -1 }],
    [{ expiresInHours: 1.5 }],
    [{ expiresInHours: '24' }],
    [{ expiresInHours: null }],
    [{}],
    [{ expiresInHours: 24, public: true }],
    [[24]],
  ])('refuses the body %j with 400 invalid and stores nothing', async (payload) => {
    const before = await test.database.database.selectFrom('share_links').select('id').execute();
    const response = await share(session.id, payload);
    expect(response.statusCode, response.body).toBe(400);
    expect(response.json().code).toBe('invalid');
    const after = await test.database.database.selectFrom('share_links').select('id').execute();
    expect(after).toHaveLength(before.length);
  });

  it("refuses to share an unknown session, another project's, or without a token", async () => {
    expect((await share(theirs.id, { expiresInHours: 1 })).statusCode).toBe(404);
    expect((await share('ses_nope', { expiresInHours: 1 })).statusCode).toBe(400);
    const anonymous = await test.app.inject({
      method: 'POST',
      url: `/v1/sessions/${session.id}/share`,
      payload: { expiresInHours: 1 },
    });
    expect(anonymous.statusCode).toBe(401);
  });
});
