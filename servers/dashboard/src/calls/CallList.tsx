import { useInfiniteQuery } from '@tanstack/react-query';
import type { FormEvent } from 'react';
import { useSearchParams } from 'react-router';
import { api, type Page } from '../api.ts';
import { formatDateTime, formatDuration } from '../ui/format.ts';
import { AppLink } from '../ui/links.tsx';
import { QueryState } from '../ui/status.tsx';
import { connectionOutcome, nameAndVersion } from './CallFacts.tsx';
import { CallsTabs } from './CallsTabs.tsx';
import { findingTitle } from './labels.ts';
import type { CallSummary } from './types.ts';
import './calls.css';

/** The filters of `GET /v1/calls` (servers/api calls/routes.ts), kept in the page's URL as they are. */
const CALL_FILTERS = [
  'from',
  'to',
  'relayed',
  'failedToConnect',
  'hasIssue',
  'networkType',
  'minQuality',
  'maxQuality',
  'browser',
  'os',
  'device',
  'release',
  'endUser',
] as const;

const DEFAULT_PAGE_SIZE = 50;

/** The list's API query from the page's: the filters and `limit` (1..200), nothing else. */
function listQuery(params: URLSearchParams): URLSearchParams {
  const query = new URLSearchParams();
  for (const name of CALL_FILTERS) {
    const value = params.get(name);
    if (value !== null && value !== '') query.set(name, value);
  }
  const limit = Number(params.get('limit'));
  query.set(
    'limit',
    String(Number.isInteger(limit) && limit >= 1 && limit <= 200 ? limit : DEFAULT_PAGE_SIZE),
  );
  return query;
}

/** An ISO time as `datetime-local` shows it (the browser's time zone), or ''. */
function toLocalInput(iso: string | null): string {
  if (iso === null || iso === '') return '';
  const date = new Date(/^\d+$/.test(iso) ? Number(iso) : iso);
  if (Number.isNaN(date.getTime())) return '';
  const local = new Date(date.getTime() - date.getTimezoneOffset() * 60_000);
  return local.toISOString().slice(0, 16);
}

const YES_NO: Array<[string, string]> = [
  ['', 'Any'],
  ['true', 'Yes'],
  ['false', 'No'],
];

function Choice({
  name,
  label,
  options,
  value,
}: {
  name: string;
  label: string;
  options: Array<[string, string]>;
  value: string | null;
}) {
  return (
    <label>
      {label}
      <select
        name={name}
        defaultValue={value ?? ''}
        onChange={(event) => event.currentTarget.form?.requestSubmit()}
      >
        {options.map(([option, text]) => (
          <option key={option} value={option}>
            {text}
          </option>
        ))}
      </select>
    </label>
  );
}

/**
 * The filters as a form over the URL: a choice applies at once, text and numbers on Enter or
 * "Apply filters". The URL is the state (a reload or a copied link keeps the filters); the form
 * is rebuilt from it whenever it changes (back and forward too).
 */
function CallFilters() {
  const [params, setParams] = useSearchParams();
  function apply(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    const next = new URLSearchParams();
    for (const name of ['org', 'project', 'limit']) {
      const value = params.get(name);
      if (value !== null) next.set(name, value);
    }
    for (const name of CALL_FILTERS) {
      const value = String(form.get(name) ?? '').trim();
      if (value === '') continue;
      next.set(name, name === 'from' || name === 'to' ? new Date(value).toISOString() : value);
    }
    setParams(next);
  }
  const text = (name: string, label: string, type = 'text', extra: Record<string, string> = {}) => (
    <label>
      {label}
      <input name={name} type={type} defaultValue={params.get(name) ?? ''} {...extra} />
    </label>
  );
  return (
    <form
      className="filter-bar call-filters"
      aria-label="Call filters"
      onSubmit={apply}
      key={params.toString()}
    >
      <label>
        Started from
        <input name="from" type="datetime-local" defaultValue={toLocalInput(params.get('from'))} />
      </label>
      <label>
        Started before
        <input name="to" type="datetime-local" defaultValue={toLocalInput(params.get('to'))} />
      </label>
      <Choice name="relayed" label="Relayed (TURN)" options={YES_NO} value={params.get('relayed')} />
      <Choice
        name="failedToConnect"
        label="Failed to connect"
        options={YES_NO}
        value={params.get('failedToConnect')}
      />
      <Choice name="hasIssue" label="Has an issue" options={YES_NO} value={params.get('hasIssue')} />
      <Choice
        name="networkType"
        label="Network"
        options={[
          ['', 'Any'],
          ...['wifi', 'cellular', 'ethernet', 'vpn', 'unknown'].map((v): [string, string] => [v, v]),
        ]}
        value={params.get('networkType')}
      />
      <Choice
        name="device"
        label="Device"
        options={[['', 'Any'], ...['desktop', 'mobile', 'tablet'].map((v): [string, string] => [v, v])]}
        value={params.get('device')}
      />
      {text('minQuality', 'Quality at least', 'number', { min: '0', max: '100' })}
      {text('maxQuality', 'Quality at most', 'number', { min: '0', max: '100' })}
      {text('browser', 'Browser')}
      {text('os', 'OS')}
      {text('release', 'Release')}
      {text('endUser', 'End user id')}
      <button type="submit">Apply filters</button>
      <AppLink to="/calls">Clear filters</AppLink>
    </form>
  );
}

/** `/calls`: the project's calls, newest first, filtered by the URL's query, a page at a time. */
export function CallList() {
  const [params] = useSearchParams();
  const query = listQuery(params);
  const calls = useInfiniteQuery({
    queryKey: ['calls', query.toString()],
    initialPageParam: undefined as string | undefined,
    queryFn: ({ pageParam }) => {
      const page = new URLSearchParams(query);
      if (pageParam !== undefined) page.set('cursor', pageParam);
      return api<Page<CallSummary>>('GET', `/v1/calls?${page}`);
    },
    getNextPageParam: (last) => last.nextCursor,
  });
  return (
    <section aria-labelledby="calls-title">
      <h1 id="calls-title">Calls</h1>
      <CallsTabs />
      <CallFilters />
      <QueryState query={calls}>
        {(data) => {
          const items = data.pages.flatMap((page) => page.items);
          if (items.length === 0)
            return (
              <p>
                No call matches. Calls come from the browser SDK's WebRTC collector (
                <code>
                  webrtc: {'{'} enabled: true {'}'}
                </code>
                ).
              </p>
            );
          return (
            <>
              <p role="status">
                {items.length} {items.length === 1 ? 'call' : 'calls'} shown
                {calls.hasNextPage ? ', more to load' : ''}.
              </p>
              <table className="calls">
                <caption className="visually-hidden">Calls, newest first</caption>
                <thead>
                  <tr>
                    <th scope="col">Started</th>
                    <th scope="col">Quality</th>
                    <th scope="col">Connection</th>
                    <th scope="col">Setup</th>
                    <th scope="col">Duration</th>
                    <th scope="col">Path</th>
                    <th scope="col">Browser</th>
                    <th scope="col">Findings</th>
                  </tr>
                </thead>
                <tbody>
                  {items.map((call) => (
                    <tr key={call.id} data-call-id={call.id}>
                      <td>
                        <AppLink to={`/calls/${call.id}`}>{formatDateTime(call.startedAt)}</AppLink>
                      </td>
                      <td>{call.qualityScore ?? '—'}</td>
                      <td>{connectionOutcome(call)}</td>
                      <td>{call.setupMs === undefined ? '—' : `${call.setupMs} ms`}</td>
                      <td>{call.durationMs === undefined ? '—' : formatDuration(call.durationMs)}</td>
                      <td>
                        {call.relayed ? 'relayed' : 'direct'}
                        {call.networkType === undefined ? '' : `, ${call.networkType}`}
                      </td>
                      <td>{nameAndVersion(call.browser) ?? '—'}</td>
                      <td>
                        {call.issues.length === 0
                          ? '—'
                          : call.issues
                              .map((issue) => `${findingTitle(issue.kind)} (${issue.severity})`)
                              .join(', ')}
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
              {calls.hasNextPage ? (
                <p>
                  <button
                    type="button"
                    onClick={() => calls.fetchNextPage()}
                    disabled={calls.isFetchingNextPage}
                  >
                    {calls.isFetchingNextPage ? 'Loading…' : 'Load more calls'}
                  </button>
                </p>
              ) : null}
            </>
          );
        }}
      </QueryState>
    </section>
  );
}
