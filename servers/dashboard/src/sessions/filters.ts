// The filters of `GET /v1/sessions` (servers/api README, Reading sessions), kept in the page's
// URL under the API's own names, so a link to a filtered list opens the same list.

/** Every filter the API takes, in the order the form shows them. */
export const SESSION_FILTERS = [
  'q',
  'urlContains',
  'user',
  'hasErrors',
  'hasGaps',
  'level',
  'browser',
  'os',
  'device',
  'minDurationSec',
  'maxDurationSec',
  'from',
  'to',
  'environment',
  'release',
] as const;

export type SessionFilter = (typeof SESSION_FILTERS)[number];

/** The API query for the page's URL: its filters and cursor, nothing else (not `org`, `project`). */
export function sessionQuery(params: URLSearchParams, limit = 50): string {
  const query = new URLSearchParams();
  for (const name of SESSION_FILTERS) {
    const value = params.get(name);
    if (value !== null && value !== '') query.set(name, value);
  }
  const cursor = params.get('cursor');
  if (cursor !== null) query.set('cursor', cursor);
  query.set('limit', String(limit));
  return query.toString();
}

/** The page's URL parameters after the filter form is submitted: the filters replaced, no cursor. */
export function withFilters(params: URLSearchParams, form: FormData): URLSearchParams {
  const next = new URLSearchParams(params);
  next.delete('cursor');
  for (const name of SESSION_FILTERS) {
    const raw = form.get(name);
    let value = typeof raw === 'string' ? raw.trim() : '';
    // <input type="datetime-local"> is local time without a zone: the API gets an ISO instant.
    if ((name === 'from' || name === 'to') && value !== '') value = new Date(value).toISOString();
    if (value === '') next.delete(name);
    else next.set(name, value);
  }
  return next;
}

/** An ISO instant as `<input type="datetime-local">` wants it, in local time. */
export function toLocalInput(iso: string | null): string {
  if (iso === null) return '';
  const date = new Date(/^\d+$/.test(iso) ? Number(iso) : iso);
  if (Number.isNaN(date.getTime())) return '';
  const local = new Date(date.getTime() - date.getTimezoneOffset() * 60_000);
  return local.toISOString().slice(0, 16);
}
