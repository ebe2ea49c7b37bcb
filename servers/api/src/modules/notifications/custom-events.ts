import type { Severity } from '@svc/protocol';
import { sql, type Transaction } from 'kysely';
import type { Database } from '../../platform/database/schema.ts';
import type { Project } from '../../platform/database/tables/projects.table.ts';
import type { StepInput } from '../../platform/jobs/step-input.ts';
import {
  type NotificationDraft,
  type NotifyResult,
  notify,
  type OccurrenceSession,
  routeOf,
} from './notify.ts';

/** Custom events that arrived longer ago than this are marked handled without notifying. */
const CUSTOM_EVENT_MAX_AGE_MS = 24 * 3600 * 1000;

/** Custom events handled per job at most (the rest wait for the next run). */
const CUSTOM_EVENT_BATCH = 1_000;

/**
 * The custom events step's part of the statement that claims or loads a processing job: whether
 * the session has custom events not yet matched against custom rules (the step runs only then).
 */
export const CUSTOM_EVENTS_INPUT: StepInput<{ unhandledCustomEvents: boolean }> = {
  columns: `
      exists (
        select 1 from session_signals as custom
        where custom.project_id = job.project_id and custom.session_id = job.session_id
          and custom.kind = 'custom' and custom.handled_at is null) as unhandled_custom`,
  read: (row) => ({ unhandledCustomEvents: row.unhandled_custom === true }),
};

/** What {@link notifyCustomEvents} did. */
export interface CustomEventsResult extends NotifyResult {
  /** Custom events matched against the rules for the first time. */
  handled: number;
}

/**
 * Matches a session's custom events (SDK `track()`) that were not handled yet against the
 * project's `custom` rules, inside the processing job's transaction, and marks them handled: each
 * notifies at most once however often the session is processed. An event notifies only if it
 * arrived within the last 24 h, so a rule created today never fires for last month's events.
 *
 * @example
 * ```ts
 * await notifyCustomEvents(transaction, project, session, { now: new Date(), appUrl });
 * ```
 */
export async function notifyCustomEvents(
  transaction: Transaction<Database>,
  project: Pick<Project, 'id' | 'organization_id'>,
  session: OccurrenceSession,
  options: { now: Date; appUrl: string },
): Promise<CustomEventsResult> {
  const { now } = options;
  const { rows } = await sql<{
    seq: number;
    event_index: number;
    t: Date;
    name: string;
    severity: Severity | null;
    details: Record<string, unknown>;
    received_at: Date;
  }>`
    update session_signals as signal set handled_at = ${now}
    from chunks
    where (signal.project_id, signal.session_id, signal.seq, signal.event_index) in (
        select project_id, session_id, seq, event_index from session_signals
        where project_id = ${project.id} and session_id = ${session.id}
          and kind = 'custom' and handled_at is null
        order by seq, event_index
        limit ${CUSTOM_EVENT_BATCH}
        for update
      )
      and chunks.project_id = signal.project_id and chunks.session_id = signal.session_id
      and chunks.seq = signal.seq
    returning signal.seq, signal.event_index, signal.t, signal.name, signal.severity, signal.details,
      chunks.received_at`.execute(transaction);
  const recent = rows
    .filter((row) => now.getTime() - new Date(row.received_at).getTime() <= CUSTOM_EVENT_MAX_AGE_MS)
    .sort((a, b) => a.seq - b.seq || a.event_index - b.event_index);
  const route = routeOf(session.url);
  const drafts = recent.map((row): NotificationDraft => {
    const properties = (row.details.props ?? {}) as Record<string, string | number | boolean>;
    const offset = Math.max(0, Math.round(new Date(row.t).getTime() - session.startedAt));
    return {
      type: 'custom',
      subject: {
        type: 'custom',
        name: row.name,
        properties,
        severity: row.severity,
        environment: session.environment,
        release: session.release,
      },
      throttleKey: `custom:${row.name}`,
      data: {
        title: `Custom event: ${row.name}`,
        summary: `"${row.name}" was tracked in session ${session.id}${session.release === null ? '' : ` (release ${session.release})`}.`,
        severity: row.severity ?? 'info',
        counts: { events: 1 },
        ...(route === undefined ? {} : { route }),
        ...(session.release === null ? {} : { release: session.release }),
        links: {
          replay: `${options.appUrl}/sessions/${session.id}?t=${offset}`,
          session: `${options.appUrl}/sessions/${session.id}`,
        },
        // What the rule matched on: the event's own properties, as the app sent them.
        properties,
      } as NotificationDraft['data'],
    };
  });
  const notified = await notify(transaction, project, drafts, now);
  return { ...notified, handled: rows.length };
}
