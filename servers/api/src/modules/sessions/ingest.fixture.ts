import { join } from 'node:path';
import { afterAll, beforeAll, expect } from 'vitest';
import { storedState } from '../../../test/ingest-helpers.ts';
import type { TestApp, TestProject } from '../../../test/test-app.ts';
import { type BlobStore, createFileBlobStore } from '../../platform/blob-store/index.ts';
import { loadMasterKey, type MasterKey } from '../../platform/crypto/index.ts';
import { projectDataKey } from '../projects/index.ts';
import { openChunk } from './chunk-storage.ts';

// What the POST /v1/ingest tests (ingest.*.test.ts) read back of what ingest stored.

/**
 * Reads of what ingest stored in the app `test()`: row counts and blobs, a session's row, chunk
 * and signal rows, and a chunk opened the way the read API does. The app's own services are
 * encapsulated in it, so this opens the same data directory again in a `beforeAll` (and closes
 * it in an `afterAll`): call it in the `describe`, after the hook that creates the app.
 */
export function ingestReads(test: () => TestApp) {
  let blobStore: BlobStore;
  let masterKey: MasterKey;
  beforeAll(async () => {
    blobStore = createFileBlobStore({ directory: join(test().dataDirectory, 'blobs') });
    masterKey = await loadMasterKey({ dataDirectory: test().dataDirectory });
  });
  afterAll(async () => {
    await blobStore?.close();
  });

  const database = () => test().database.database;
  const state = () => storedState(database(), test().dataDirectory);
  const sessionRow = (project: TestProject, sessionId: string) =>
    database()
      .selectFrom('sessions')
      .selectAll()
      .where('project_id', '=', project.project.id)
      .where('id', '=', sessionId)
      .executeTakeFirstOrThrow();
  const chunkRows = (project: TestProject, sessionId: string) =>
    database()
      .selectFrom('chunks')
      .selectAll()
      .where('project_id', '=', project.project.id)
      .where('session_id', '=', sessionId)
      .orderBy('seq')
      .execute();
  const signalRows = (project: TestProject, sessionId: string) =>
    database()
      .selectFrom('session_signals')
      .selectAll()
      .where('project_id', '=', project.project.id)
      .where('session_id', '=', sessionId)
      .orderBy('seq')
      .orderBy('event_index')
      .execute();
  /** Reads a stored chunk back the way the read API does: the row's blob, opened. */
  const readBack = async (project: TestProject, sessionId: string, seq: number) => {
    const row = await database()
      .selectFrom('chunks')
      .select('blob_key')
      .where('project_id', '=', project.project.id)
      .where('session_id', '=', sessionId)
      .where('seq', '=', seq)
      .executeTakeFirstOrThrow();
    const sealed = await blobStore.get(row.blob_key);
    expect(sealed).not.toBeNull();
    const bytes = await openChunk(projectDataKey(masterKey, project.project), sealed as Uint8Array, {
      projectId: project.project.id,
      sessionId,
      seq,
    });
    return Buffer.from(bytes);
  };

  return { state, sessionRow, chunkRows, signalRows, readBack };
}
