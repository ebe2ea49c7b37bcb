import { type RawBuilder, sql } from 'kysely';

// Whose data a privacy request is about, the same for access (DSAR) and erasure: what one exports
// is what the other deletes (servers/api/README.md, Privacy requests and retention).

/** An end user as the app identified them: the id and/or the e-mail address given to `identify`. */
export interface Subject {
  userId?: string | null | undefined;
  email?: string | null | undefined;
}

/**
 * The subject's sessions in the organization's projects, as a query of `(project_id, id)` rows:
 * sessions identified with the user id, or with the e-mail address (case-insensitively), sessions
 * with a call whose end user is the user id, and the other sessions of the same visits (the pages
 * seen before `identify`, in the same tab). Uses the indexes on sessions by user, by e-mail, by
 * visit, and calls by end user. Order and limit it as needed.
 *
 * @example
 * ```ts
 * const rows = await sql`${subjectSessions('org_1', { email: 'ada@example.com' })} order by 1, 2 limit 50`.execute(db);
 * ```
 */
export function subjectSessions(organizationId: string, subject: Subject): RawBuilder<unknown> {
  const userId = subject.userId ?? null;
  const email =
    subject.email === null || subject.email === undefined ? null : subject.email.trim().toLowerCase();
  const matches = [
    ...(userId === null
      ? []
      : [
          sql`select project_id, id, visit_id from sessions
              where project_id in (select id from org_projects) and user_id = ${userId}`,
          sql`select sessions.project_id, sessions.id, sessions.visit_id from calls
              join sessions on sessions.project_id = calls.project_id and sessions.id = calls.session_id
              where calls.project_id in (select id from org_projects) and calls.end_user_id = ${userId}`,
        ]),
    ...(email === null
      ? []
      : [
          sql`select project_id, id, visit_id from sessions
              where project_id in (select id from org_projects) and lower(user_email) = ${email}`,
        ]),
  ];
  if (matches.length === 0) return sql`select project_id, id from sessions where false`;
  return sql`
    with org_projects as (select id from projects where organization_id = ${organizationId}),
    matched as (${sql.join(matches, sql` union `)})
    select project_id, id from matched
    union
    select sessions.project_id, sessions.id from sessions
    join (select distinct project_id, visit_id from matched where visit_id is not null) as visits
      on sessions.project_id = visits.project_id and sessions.visit_id = visits.visit_id`;
}
