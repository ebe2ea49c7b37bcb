import { randomBytes } from 'node:crypto';
import { copyFile, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { deflate, newSessionId, rewriteChunk, validChunkFixture } from '../test/ingest-helpers.ts';
import { captureIo, createScratchDirectories, createTestServers } from '../test/process-helpers.ts';
import { withMigratedStore } from '../test/test-database.ts';
import { runCli } from './cli.ts';
import type { RunningServer } from './server.ts';

// Master key rotation end to end: the real server on the embedded store, the operator CLI, and
// chunks stored before a rotation read back after it. Each data directory starts with an empty
// store at the latest schema (a copy of the run's template; server.test.ts covers creating one).

const servers = createTestServers();
const scratch = createScratchDirectories('svc-rotation-');
const { start, stop } = servers;

afterEach(async () => {
  await servers.closeAll();
  await scratch.removeAll();
});

/** Ingests one chunk through HTTP; returns how to read it back. */
async function ingestOne(server: RunningServer) {
  const credentials = server.credentials;
  if (credentials === null) throw new Error('expected first-start credentials');
  const sessionId = newSessionId();
  const json = rewriteChunk(await validChunkFixture('recording-seq-0'), { sessionId });
  const response = await fetch(`${server.url}/v1/ingest`, {
    method: 'POST',
    headers: { 'x-service-project-key': credentials.projectKey, 'x-service-encoding': 'json+deflate' },
    body: deflate(json),
  });
  expect(response.status, await response.clone().text()).toBe(200);
  return { sessionId, json, apiToken: credentials.apiToken };
}

async function readChunk(server: RunningServer, chunk: Awaited<ReturnType<typeof ingestOne>>) {
  const response = await fetch(`${server.url}/v1/sessions/${chunk.sessionId}/chunks/0`, {
    headers: { authorization: `Bearer ${chunk.apiToken}` },
  });
  return { status: response.status, bytes: Buffer.from(await response.arrayBuffer()) };
}

const newKey = () => randomBytes(32).toString('base64');

// Server starts and CLI runs on PGlite directories: each test takes several seconds, more on a busy
// 2-core machine.
describe('master key rotation', { timeout: 120_000 }, () => {
  it('rotates the key file: stored chunks read back byte-identical under the new key', async () => {
    const directory = await withMigratedStore(await scratch.make());
    const keyFile = join(directory, 'master.key');
    const first = await start({ SVC_DATA_DIR: directory });
    const chunk = await ingestOne(first);
    await stop(first);
    const before = await readFile(keyFile, 'utf8');

    const io = captureIo();
    expect(await runCli(['rotate-master-key', '--json'], { SVC_DATA_DIR: directory }, io), io.err).toBe(0);
    const rotated = JSON.parse(io.out);
    expect(rotated).toEqual({
      previousKeyId: expect.stringMatching(/^[0-9a-f]{16}$/),
      masterKeyId: expect.stringMatching(/^[0-9a-f]{16}$/),
      rewrapped: 1,
      current: 0,
    });
    expect(rotated.masterKeyId).not.toBe(rotated.previousKeyId);
    expect(await readFile(keyFile, 'utf8')).not.toBe(before);
    expect((await stat(keyFile)).mode & 0o777).toBe(0o600);
    await expect(stat(join(directory, 'master.key.previous'))).rejects.toThrow(/ENOENT/);

    const after = await start({ SVC_DATA_DIR: directory });
    const read = await readChunk(after, chunk);
    expect(read.status).toBe(200);
    expect(read.bytes.equals(chunk.json)).toBe(true);
    await stop(after);

    // The old key alone no longer opens the project's data.
    const old = await start({ SVC_DATA_DIR: directory, SVC_MASTER_KEY: before.trim() });
    expect((await readChunk(old, chunk)).status).toBe(500);
    await stop(old);
    // Nothing is left to re-wrap.
    const check = captureIo();
    expect(await runCli(['rewrap-data-keys', '--json'], { SVC_DATA_DIR: directory }, check)).toBe(0);
    expect(JSON.parse(check.out)).toMatchObject({ rewrapped: 0, current: 1, removedPreviousKeyFile: false });
  });

  it('recovers from a rotation cut off between the key files and the re-wrap', async () => {
    const directory = await withMigratedStore(await scratch.make());
    const keyFile = join(directory, 'master.key');
    const first = await start({ SVC_DATA_DIR: directory });
    const chunk = await ingestOne(first);
    await stop(first);
    // What a crash right after the new key file was created leaves behind.
    await copyFile(keyFile, join(directory, 'master.key.previous'));
    await writeFile(keyFile, `${newKey()}\n`, { mode: 0o600 });

    const during = await start({ SVC_DATA_DIR: directory });
    const read = await readChunk(during, chunk);
    expect(read.bytes.equals(chunk.json)).toBe(true);
    await stop(during);

    const refused = captureIo();
    expect(await runCli(['rotate-master-key'], { SVC_DATA_DIR: directory }, refused)).toBe(1);
    expect(refused.err).toMatch(/rotation is unfinished.*svc rewrap-data-keys/);

    const io = captureIo();
    expect(await runCli(['rewrap-data-keys', '--json'], { SVC_DATA_DIR: directory }, io), io.err).toBe(0);
    expect(JSON.parse(io.out)).toMatchObject({ rewrapped: 1, current: 0, removedPreviousKeyFile: true });
    await expect(stat(join(directory, 'master.key.previous'))).rejects.toThrow(/ENOENT/);

    const after = await start({ SVC_DATA_DIR: directory });
    expect((await readChunk(after, chunk)).bytes.equals(chunk.json)).toBe(true);
  });

  it('rotates SVC_MASTER_KEY with SVC_MASTER_KEY_PREVIOUS and rewrap-data-keys', async () => {
    const directory = await withMigratedStore(await scratch.make());
    const [oldKey, otherKey, nextKey] = [newKey(), newKey(), newKey()];
    const first = await start({ SVC_DATA_DIR: directory, SVC_MASTER_KEY: oldKey });
    const chunk = await ingestOne(first);
    await stop(first);

    const instructions = captureIo();
    expect(
      await runCli(['rotate-master-key'], { SVC_DATA_DIR: directory, SVC_MASTER_KEY: oldKey }, instructions),
    ).toBe(1);
    expect(instructions.err).toMatch(/SVC_MASTER_KEY_PREVIOUS=<old key>/);

    // The new key alone cannot open what the old one wrapped; with the old one as previous it can.
    const without = await start({ SVC_DATA_DIR: directory, SVC_MASTER_KEY: nextKey });
    expect((await readChunk(without, chunk)).status).toBe(500);
    await stop(without);
    const rotating = {
      SVC_DATA_DIR: directory,
      SVC_MASTER_KEY: nextKey,
      SVC_MASTER_KEY_PREVIOUS: `${otherKey}, ${oldKey}`,
    };
    const during = await start(rotating);
    expect((await readChunk(during, chunk)).bytes.equals(chunk.json)).toBe(true);
    await stop(during);

    const io = captureIo();
    expect(await runCli(['rewrap-data-keys'], rotating, io), io.err).toBe(0);
    expect(io.out).toMatch(/Re-wrapped the data keys of 1 project\(s\)/);
    expect(io.out).toMatch(/SVC_MASTER_KEY_PREVIOUS can be removed/);

    const after = await start({ SVC_DATA_DIR: directory, SVC_MASTER_KEY: nextKey });
    expect((await readChunk(after, chunk)).bytes.equals(chunk.json)).toBe(true);
  });

  it('refuses a malformed SVC_MASTER_KEY_PREVIOUS at start-up, naming it and not echoing it', async () => {
    // Refused before the store is opened: an empty directory.
    const directory = await scratch.make();
    const secretish = 'c2VjcmV0LWJ1dC10b28tc2hvcnQ=';
    await expect(
      start({ SVC_DATA_DIR: directory, SVC_MASTER_KEY_PREVIOUS: `${newKey()},${secretish}` }),
    ).rejects.toThrow(/SVC_MASTER_KEY_PREVIOUS/);
    const error = await start({ SVC_DATA_DIR: directory, SVC_MASTER_KEY_PREVIOUS: secretish }).catch(
      (caught: unknown) => caught as Error,
    );
    expect(String((error as Error).message)).not.toContain(secretish);
  });
});
