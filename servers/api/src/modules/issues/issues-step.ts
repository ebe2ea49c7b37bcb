import type { Finding } from '@svc/detectors';
import { type Kysely, sql, type Transaction } from 'kysely';
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
import { parseStackFrames, type StackFrame } from './fingerprint.ts';

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

/** A frame after symbolication: where the source map put it (`mapped`), else as printed. */
export type SymbolicatedFrame = StackFrame & { mapped: boolean };

/**
 * Maps a stack's frames through the project's source maps (the sourcemaps module's, given by
 * whoever composes processing): one output frame per input frame, in order.
 */
export type SymbolicateFrames = (
  projectId: string,
  release: string | null,
  frames: StackFrame[],
) => Promise<SymbolicatedFrame[]>;

/** Distinct stacks of one session that are symbolicated; errors beyond keep their printed frames. */
const MAX_SYMBOLICATED_STACKS = 100;

/**
 * The frames of the session's errors not yet in a cluster, through the source maps, by the
 * error's place (`<seq>:<event index>`); only errors with at least one mapped frame. Runs before
 * the job's transaction (it reads maps from the database and the blob store); an error with the
 * same stack as another is mapped once.
 *
 * @example
 * ```ts
 * const symbolicated = await symbolicateSessionErrors(database, project.id, session, symbolicate);
 * await recordSessionIssues(transaction, project, session, findings, { now, appUrl, symbolicated });
 * ```
 */
export async function symbolicateSessionErrors(
  database: Kysely<Database>,
  projectId: string,
  session: Pick<OccurrenceSession, 'id' | 'release'>,
  symbolicate: SymbolicateFrames,
): Promise<Map<string, SymbolicatedFrame[]>> {
  const errors = await database
    .selectFrom('session_signals as error')
    .select(['error.seq', 'error.event_index', 'error.details'])
    .where('error.project_id', '=', projectId)
    .where('error.session_id', '=', session.id)
    .where('error.kind', '=', 'error')
    .where(({ not, exists, selectFrom }) =>
      not(
        exists(
          selectFrom('cluster_occurrences as occurrence')
            .select('occurrence.occurrence_key')
            .whereRef('occurrence.project_id', '=', 'error.project_id')
            .whereRef('occurrence.session_id', '=', 'error.session_id')
            .where(
              'occurrence.occurrence_key',
              '=',
              sql<string>`'error:' || ${sql.ref('error.seq')} || ':' || ${sql.ref('error.event_index')}`,
            ),
        ),
      ),
    )
    .execute();
  const byStack = new Map<string, Promise<SymbolicatedFrame[] | undefined>>();
  const result = new Map<string, SymbolicatedFrame[]>();
  for (const error of errors) {
    const stack = error.details.stack;
    if (typeof stack !== 'string') continue;
    let mapped = byStack.get(stack);
    if (mapped === undefined) {
      if (byStack.size === MAX_SYMBOLICATED_STACKS) continue;
      const frames = parseStackFrames(stack);
      mapped =
        frames.length === 0
          ? Promise.resolve(undefined)
          : symbolicate(projectId, session.release, frames).then((output) =>
              output.some((frame) => frame.mapped) ? output : undefined,
            );
      byStack.set(stack, mapped);
    }
    const frames = await mapped;
    if (frames !== undefined) result.set(`${error.seq}:${error.event_index}`, frames);
  }
  return result;
}

/**
 * Records the session's findings and error signals into the project's issue clusters, inside the
 * job's transaction; the clusters' changes write the notifications they cause (events, outbox
 * rows). An error with `symbolicated` frames (from {@link symbolicateSessionErrors}) is
 * fingerprinted by them, and they are kept in its signal's `details.frames` for reading.
 */
export async function recordSessionIssues(
  transaction: Transaction<Database>,
  project: Pick<Project, 'id' | 'organization_id'>,
  session: OccurrenceSession,
  findings: readonly Finding[],
  options: { now: Date; appUrl: string; symbolicated?: ReadonlyMap<string, SymbolicatedFrame[]> },
): Promise<RecordOccurrencesResult> {
  const errors = await findErrorSignals(transaction, project.id, session.id);
  const symbolicated = options.symbolicated ?? new Map<string, SymbolicatedFrame[]>();
  for (const error of errors) {
    const frames = symbolicated.get(`${error.seq}:${error.event_index}`);
    if (frames === undefined) continue;
    await transaction
      .updateTable('session_signals')
      .set({ details: sql`details || ${JSON.stringify({ frames })}::jsonb` })
      .where('project_id', '=', project.id)
      .where('session_id', '=', session.id)
      .where('seq', '=', error.seq)
      .where('event_index', '=', error.event_index)
      .execute();
  }
  return recordOccurrences(
    transaction,
    project,
    session,
    [
      ...findingOccurrences(findings),
      ...errors.map((error) => errorOccurrence(error, symbolicated.get(`${error.seq}:${error.event_index}`))),
    ],
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
