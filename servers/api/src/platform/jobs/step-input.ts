/**
 * What one step of a job reads, as a part of the one statement that claims (or loads) its jobs:
 * entries of the select list and joins over rows named `job` (with the job's key columns), and how
 * the step reads its part of a result row. A job of several steps (processing: calls, issues,
 * custom events) reads all their inputs in one round trip, while each step keeps its SQL with
 * its other code.
 *
 * @example
 * ```ts
 * const pending: StepInput<{ pending: boolean }> = {
 *   columns: 'exists (select 1 from signals where signals.session_id = job.session_id) as pending',
 *   read: (row) => ({ pending: row.pending === true }),
 * };
 * ```
 */
export interface StepInput<Input> {
  /** Select-list entries, comma-separated, with names no other step uses. */
  readonly columns: string;
  /** Joins the columns need (`left join ... on ... job.session_id`), if any. */
  readonly joins?: string;
  /** The step's input from a result row (columns of a left join are null when it found nothing). */
  read(row: Readonly<Record<string, unknown>>): Input;
}
