import type { Kysely } from 'kysely';
import type { Database } from '../../platform/database/schema.ts';
import { findSession, findSignalsPage, listChunks } from './session-queries.ts';
import { type SessionDetail, toSessionDetail } from './views.ts';

/** Most SDK-reported gaps a SessionDetail lists. */
const MAX_SDK_GAPS = 1000;

/** The project's session as a SessionDetail, or `undefined` when the project has no such session. */
export async function loadSessionDetail(
  database: Kysely<Database>,
  projectId: string,
  sessionId: string,
): Promise<SessionDetail | undefined> {
  const session = await findSession(database, projectId, sessionId);
  if (session === undefined) return undefined;
  const [chunks, gaps] = await Promise.all([
    listChunks(database, projectId, sessionId),
    findSignalsPage(database, projectId, sessionId, { kinds: ['gap'], limit: MAX_SDK_GAPS }),
  ]);
  return toSessionDetail(session, chunks, gaps.signals);
}
