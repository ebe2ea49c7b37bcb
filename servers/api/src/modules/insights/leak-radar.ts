import type { Severity } from '@svc/protocol';
import type { Kysely, Transaction } from 'kysely';
import type { Database } from '../../platform/database/schema.ts';
import type { Project } from '../../platform/database/tables/projects.table.ts';
import { isSecretName, LEAK_KINDS, type LeakKind, leakKindsOf } from '../../platform/leak-patterns.ts';
import { notifySecurityEvent } from '../notifications/index.ts';

// The leak radar (servers/api/README.md, Insights, Leak radar): the facts job reads every new
// chunk of a session anyway; this looks in the fields where an app puts text of its own for what
// masking should have hidden (e-mail addresses, card numbers, bearer tokens, API keys, secrets)
// and reports where it is (the session, the event type, the field), never what it is, as a
// `privacy.leak_radar` security event. At most one event per session and kind per run, and one
// kind in one field at most once an hour per project (`leak_radar_reports`).

/** One leak: what kind, in which field (without positions) and where exactly (with them). */
export interface LeakFinding {
  kind: LeakKind;
  /** The event type (`nav`, `request`, `error`, `custom`, `rrweb`), or `meta` for the chunk's. */
  eventType: string;
  /** The field, the same in every session: `nav.url`, `error.message`, `custom.props.password`. */
  field: string;
  /** Where in the session: `chunk 0, events[12].url`. */
  place: string;
}

/** How long the same kind in the same field is not reported again for a project. */
const REPORT_INTERVAL_MS = 60 * 60_000;
/** Places named in one event's summary. */
const MAX_PLACES = 5;

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** A property name as it may be shown: a name that is itself a leak is withheld (its position instead). */
function propertyField(name: string, position: number): string {
  return leakKindsOf(name).length > 0 ? `custom.props[#${position}]` : `custom.props.${name.slice(0, 64)}`;
}

/**
 * The leaks of one chunk's fields: the chunk's page URL and referrer (`meta`), `nav` URLs, rrweb
 * page loads' `href`, `request` URLs, `error` messages and stacks, `custom` event names and
 * properties (names and values; a secret-named property with a value is a `secret`). `identify`
 * is the user's own data and rrweb's text and input values are masked by the SDK: not scanned.
 *
 * @example
 * ```ts
 * findLeaks(0, { events: [{ t: 1, type: 'nav', url: 'https://shop.test/?email=ada@example.com' }] });
 * // [{ kind: 'email', eventType: 'nav', field: 'nav.url', place: 'chunk 0, events[0].url' }]
 * ```
 */
export function findLeaks(seq: number, chunk: { meta?: unknown; events: readonly unknown[] }): LeakFinding[] {
  const findings: LeakFinding[] = [];
  const check = (text: unknown, eventType: string, field: string, place: string) => {
    if (typeof text !== 'string' || text.length === 0) return;
    for (const kind of leakKindsOf(text))
      findings.push({ kind, eventType, field, place: `chunk ${seq}, ${place}` });
  };
  if (isRecord(chunk.meta)) {
    check(chunk.meta.url, 'meta', 'meta.url', 'meta.url');
    check(chunk.meta.referrer, 'meta', 'meta.referrer', 'meta.referrer');
  }
  chunk.events.forEach((event, index) => {
    if (!isRecord(event)) return;
    const at = `events[${index}]`;
    switch (event.type) {
      case 'nav':
        check(event.url, 'nav', 'nav.url', `${at}.url`);
        break;
      case 'request':
        check(event.url, 'request', 'request.url', `${at}.url`);
        break;
      case 'error':
        check(event.message, 'error', 'error.message', `${at}.message`);
        check(event.stack, 'error', 'error.stack', `${at}.stack`);
        break;
      case 'rrweb':
        // A page load (rrweb Meta) records the page's URL.
        if (isRecord(event.data) && event.data.type === 4 && isRecord(event.data.data))
          check(event.data.data.href, 'rrweb', 'rrweb.meta.href', `${at}.data.data.href`);
        break;
      case 'custom': {
        check(event.name, 'custom', 'custom.name', `${at}.name`);
        if (!isRecord(event.props)) break;
        Object.entries(event.props).forEach(([name, value], position) => {
          const field = propertyField(name, position);
          const place = `${at}.props[#${position}]`;
          check(name, 'custom', field, `${place} (name)`);
          check(value, 'custom', field, place);
          // A number is no secret (`token_count: 3`); a masked value (`***`) is none either.
          const given = typeof value === 'string' && /[^*\s]/.test(value);
          if (given && isSecretName(name))
            findings.push({ kind: 'secret', eventType: 'custom', field, place: `chunk ${seq}, ${place}` });
        });
        break;
      }
    }
  });
  return findings;
}

const KIND_WORDS: Record<LeakKind, { title: string; severity: Severity }> = {
  email: { title: 'an e-mail address', severity: 'medium' },
  card_number: { title: 'a card number', severity: 'high' },
  bearer_token: { title: 'a bearer token', severity: 'high' },
  api_key: { title: 'an API key or token', severity: 'high' },
  secret: { title: 'a secret', severity: 'high' },
};

/**
 * Reports a session's leaks in the caller's transaction (the facts job's): per kind, the fields
 * not reported for the project within the hour are claimed in `leak_radar_reports` (one upsert,
 * so concurrent jobs claim each once), and one `privacy.leak_radar` security event names the
 * session, the event types, the fields and up to 5 places, never a value.
 *
 * @returns how many events and deliveries were written
 */
export async function reportLeaks(
  transaction: Kysely<Database> | Transaction<Database>,
  project: Pick<Project, 'id' | 'organization_id'>,
  sessionId: string,
  findings: readonly LeakFinding[],
  options: { now: Date; appUrl: string },
): Promise<{ events: number; deliveries: number }> {
  const result = { events: 0, deliveries: 0 };
  for (const kind of LEAK_KINDS) {
    const ofKind = findings.filter((finding) => finding.kind === kind);
    if (ofKind.length === 0) continue;
    const fields = [...new Set(ofKind.map((finding) => finding.field))].sort();
    const claimed = await transaction
      .insertInto('leak_radar_reports')
      .values(fields.map((field) => ({ project_id: project.id, kind, field, reported_at: options.now })))
      .onConflict((conflict) =>
        conflict
          .columns(['project_id', 'kind', 'field'])
          .doUpdateSet((update) => ({ reported_at: update.ref('excluded.reported_at') }))
          .where(
            'leak_radar_reports.reported_at',
            '<=',
            new Date(options.now.getTime() - REPORT_INTERVAL_MS),
          ),
      )
      .returning('field')
      .execute();
    const reported = new Set(claimed.map((row) => row.field));
    if (reported.size === 0) continue;
    const kept = ofKind.filter((finding) => reported.has(finding.field));
    const eventTypes = [...new Set(kept.map((finding) => finding.eventType))].sort();
    const places = kept.slice(0, MAX_PLACES).map((finding) => finding.place);
    const words = KIND_WORDS[kind];
    const written = await notifySecurityEvent(
      transaction,
      project,
      {
        type: 'privacy.leak_radar',
        data: {
          title: `Leak radar: ${words.title} in ${[...reported].sort().join(', ')}`.slice(0, 200),
          summary:
            `Session ${sessionId} holds ${words.title} (${kind}) that masking should have hidden, ` +
            `in ${kept.length} place${kept.length === 1 ? '' : 's'}: event type ${eventTypes.join(', ')}, ` +
            `field ${[...reported].sort().join(', ')} (${places.join('; ')}${kept.length > places.length ? '; …' : ''}). ` +
            'The value is not kept here; mask the field in the SDK or stop sending it.',
          severity: words.severity,
          counts: { places: kept.length, fields: reported.size },
          links: { session: `${options.appUrl}/sessions/${sessionId}` },
        },
      },
      options.now,
    );
    result.events += 1;
    result.deliveries += written.deliveries;
  }
  return result;
}
