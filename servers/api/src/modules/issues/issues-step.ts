import type { Finding } from '@svc/detectors';
import type { Kysely, Transaction } from 'kysely';
import type { Database } from '../../platform/database/schema.ts';
import type { Project } from '../../platform/database/tables/projects.table.ts';
import type { StepInput } from '../../platform/jobs/step-input.ts';
import type { OccurrenceSession } from '../notifications/index.ts';
import {
  errorOccurrence,
  findingOccurrences,
  type RecordOccurrencesResult,
  recordOccurrences,
} from './clusters.ts';

// The issues step of a session's processing (servers/api/docs/processing.md): the session's
// findings and errors into the project's issue clusters, and the notifications their changes cause.

/** What the issues step reads with its job (see {@link ISSUES_INPUT}). */
export interface IssuesInput {
  /** The occurrence keys of the session's findings recorded in issue clusters. */
  findingOccurrenceKeys: string[];
  /** Whether an error signal of the session has no recorded occurrence yet. */
  unrecordedErrors: boolean;
}

/** The issues step's part of the statement that claims or loads a job. */
export const ISSUES_INPUT: StepInput<IssuesInput> = {
  columns: `
      (select coalesce(jsonb_agg(occurrence_key), '[]'::jsonb) from cluster_occurrences as occurrence
        where occurrence.project_id = job.project_id and occurrence.session_id = job.session_id
          and occurrence.occurrence_key like 'finding:%')
        as finding_keys,
      exists (
        select 1 from session_signals as error
        where error.project_id = job.project_id and error.session_id = job.session_id
          and error.kind = 'error'
          and not exists (
            select 1 from cluster_occurrences as occurrence
            where occurrence.project_id = error.project_id and occurrence.session_id = error.session_id
              and occurrence.occurrence_key = 'error:' || error.seq || ':' || error.event_index))
        as unrecorded_errors`,
  read: (row) => ({
    findingOccurrenceKeys: row.finding_keys as string[],
    unrecordedErrors: row.unrecorded_errors === true,
  }),
};

/**
 * Whether the session's occurrences changed: a finding appeared or went, or an error has no
 * occurrence yet. Otherwise recording them again changes nothing, and the step is skipped.
 */
export function occurrencesChanged(input: IssuesInput, findings: readonly Finding[]): boolean {
  const keys = findingOccurrences(findings).map((occurrence) => occurrence.key);
  return (
    input.unrecordedErrors ||
    keys.length !== input.findingOccurrenceKeys.length ||
    keys.some((key) => !input.findingOccurrenceKeys.includes(key))
  );
}

/**
 * Records the session's findings and error signals into the project's issue clusters, inside the
 * job's transaction; the clusters' changes write the notifications they cause (events, outbox
 * rows).
 */
export async function recordSessionIssues(
  transaction: Transaction<Database>,
  project: Pick<Project, 'id' | 'organization_id'>,
  session: OccurrenceSession,
  findings: readonly Finding[],
  options: { now: Date; appUrl: string },
): Promise<RecordOccurrencesResult> {
  const errors = await findErrorSignals(transaction, project.id, session.id);
  return recordOccurrences(
    transaction,
    project,
    session,
    [...findingOccurrences(findings), ...errors.map(errorOccurrence)],
    options,
  );
}

/** The session's error signals (for their issue cluster occurrences). */
function findErrorSignals(
  database: Kysely<Database> | Transaction<Database>,
  projectId: string,
  sessionId: string,
) {
  return database
    .selectFrom('session_signals')
    .select(['seq', 'event_index', 't', 'name', 'message', 'details'])
    .where('project_id', '=', projectId)
    .where('session_id', '=', sessionId)
    .where('kind', '=', 'error')
    .execute();
}
