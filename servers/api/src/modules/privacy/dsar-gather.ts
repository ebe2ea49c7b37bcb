import { type Kysely, type RawBuilder, sql } from 'kysely';
import type { Database } from '../../platform/database/schema.ts';
import type { DsarManifest } from '../../platform/database/tables/dsar.table.ts';
import type { DsarSubject } from './dsar-repository.ts';
import { subjectSessions } from './subject.ts';

// What an access request's job gathers: every session of the subject in the organization's
// projects (subject.ts: identified with the user id or the e-mail address, with a call of that end
// user, or of the same visit; erasure deletes the same sessions), its chunks' count and bytes, its
// errors and custom events, and every call of those sessions. The lists are
// what the archive is built from on download (src/modules/privacy/dsar-archive.ts).

/** The condition that a row of `sessions` (as `alias`) is one of the subject's sessions (subject.ts). */
function isSubjectSession(
  organizationId: string,
  subject: DsarSubject,
  alias: 'sessions' | 'subject_sessions',
): RawBuilder<boolean> {
  return sql<boolean>`(${sql.ref(`${alias}.project_id`)}, ${sql.ref(`${alias}.id`)}) in (
    select project_id, id from (${subjectSessions(organizationId, subject)}) as subject_session_ids)`;
}

/**
 * The manifest of `subject`'s data in the organization's projects, as it is now.
 *
 * @example
 * ```ts
 * const manifest = await gatherDsarManifest(database, organizationId, { email: 'ada@example.com' });
 * manifest.totals.sessions; // 3
 * ```
 */
export async function gatherDsarManifest(
  database: Kysely<Database>,
  organizationId: string,
  subject: DsarSubject,
): Promise<DsarManifest> {
  const projects = await database
    .selectFrom('projects')
    .select(['id', 'name'])
    .where('organization_id', '=', organizationId)
    .orderBy('id')
    .execute();
  const projectIds = projects.map((project) => project.id);
  if (projectIds.length === 0) return emptyManifest();

  const sessions = await database
    .selectFrom('sessions')
    .leftJoin('chunks', (join) =>
      join
        .onRef('chunks.project_id', '=', 'sessions.project_id')
        .onRef('chunks.session_id', '=', 'sessions.id'),
    )
    .select([
      'sessions.project_id',
      'sessions.id',
      sql<number>`count(chunks.seq)::int`.as('chunks'),
      sql<number>`coalesce(sum(chunks.inflated_bytes), 0)::bigint`.as('bytes'),
    ])
    .where('sessions.project_id', 'in', projectIds)
    .where(isSubjectSession(organizationId, subject, 'sessions'))
    .groupBy(['sessions.project_id', 'sessions.id', 'sessions.started_at'])
    .orderBy('sessions.project_id')
    .orderBy('sessions.started_at')
    .orderBy('sessions.id')
    .execute();

  const calls = await database
    .selectFrom('calls')
    .select(['project_id', 'id', 'session_id'])
    .where('project_id', 'in', projectIds)
    .where((expression) =>
      expression.or([
        ...(subject.userId === undefined ? [] : [expression('calls.end_user_id', '=', subject.userId)]),
        expression.exists(
          expression
            .selectFrom('sessions as subject_sessions')
            .select(sql`1`.as('one'))
            .whereRef('subject_sessions.project_id', '=', 'calls.project_id')
            .whereRef('subject_sessions.id', '=', 'calls.session_id')
            .where(isSubjectSession(organizationId, subject, 'subject_sessions')),
        ),
      ]),
    )
    .orderBy('project_id')
    .orderBy('started_at')
    .orderBy('id')
    .execute();

  const signals = await database
    .selectFrom('session_signals')
    .innerJoin('sessions', (join) =>
      join
        .onRef('sessions.project_id', '=', 'session_signals.project_id')
        .onRef('sessions.id', '=', 'session_signals.session_id'),
    )
    .select(['session_signals.kind', sql<number>`count(*)::int`.as('count')])
    .where('sessions.project_id', 'in', projectIds)
    .where(isSubjectSession(organizationId, subject, 'sessions'))
    .where('session_signals.kind', 'in', ['error', 'custom'])
    .groupBy('session_signals.kind')
    .execute();
  const signalCount = (kind: string) => Number(signals.find((row) => row.kind === kind)?.count ?? 0);

  const manifestSessions = sessions.map((session) => ({
    projectId: session.project_id,
    id: session.id,
    chunks: Number(session.chunks),
    bytes: Number(session.bytes),
  }));
  const manifestCalls = calls.map((call) => ({
    projectId: call.project_id,
    id: call.id,
    sessionId: call.session_id,
  }));
  const involved = projects
    .map((project) => ({
      projectId: project.id,
      name: project.name,
      sessions: manifestSessions.filter((session) => session.projectId === project.id).length,
      calls: manifestCalls.filter((call) => call.projectId === project.id).length,
    }))
    .filter((project) => project.sessions > 0 || project.calls > 0);
  return {
    totals: {
      projects: involved.length,
      sessions: manifestSessions.length,
      chunks: manifestSessions.reduce((sum, session) => sum + session.chunks, 0),
      bytes: manifestSessions.reduce((sum, session) => sum + session.bytes, 0),
      calls: manifestCalls.length,
      errors: signalCount('error'),
      customEvents: signalCount('custom'),
    },
    projects: involved,
    sessions: manifestSessions,
    calls: manifestCalls,
  };
}

function emptyManifest(): DsarManifest {
  return {
    totals: { projects: 0, sessions: 0, chunks: 0, bytes: 0, calls: 0, errors: 0, customEvents: 0 },
    projects: [],
    sessions: [],
    calls: [],
  };
}
