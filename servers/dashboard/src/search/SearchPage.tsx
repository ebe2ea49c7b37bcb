import { useInfiniteQuery } from '@tanstack/react-query';
import type { FormEvent } from 'react';
import { useSearchParams } from 'react-router';
import { api } from '../api.ts';
import { detectorKindLabel } from '../ui/detector-kinds.ts';
import { formatDateTime, formatDuration } from '../ui/format.ts';
import { AppLink } from '../ui/links.tsx';
import { ErrorText } from '../ui/status.tsx';
import { useWorkspace } from '../ui/workspace.tsx';
import type { SearchAnswer, SearchQuery, SearchResult, SearchType } from './types.ts';
import './search.css';

// `/search?q=…` (`&ask=1` for a question in words, `&type=session|call|issue`, `&limit=`): one
// ranked search over the project's sessions, calls and issues (`POST /v1/search`), results mixed
// in the server's order (the best match first, whatever its type), each linking to its page; more
// with the answer's `nextCursor`. The query lives in the URL, so a link opens the same search.

const TYPES: [SearchType, string][] = [
  ['session', 'Sessions'],
  ['call', 'Calls'],
  ['issue', 'Issues'],
];
const TYPE_WORDS: Record<SearchType, string> = { session: 'Session', call: 'Call', issue: 'Issue' };
const DEFAULT_LIMIT = 20;

/** `?limit=` as the API takes it (1..100), else the default. */
function limitOf(value: string | null): number {
  const limit = Number(value);
  return Number.isInteger(limit) && limit >= 1 && limit <= 100 ? limit : DEFAULT_LIMIT;
}

function typeOf(value: string | null): SearchType | undefined {
  return TYPES.some(([type]) => type === value) ? (value as SearchType) : undefined;
}

/** A structured query in words: `“checkout” · sessions · browser: Safari · from …`. */
function describeQuery(query: SearchQuery): string {
  const parts: string[] = [];
  if (query.q !== undefined && query.q.trim() !== '') parts.push(`“${query.q}”`);
  if (query.types !== undefined) parts.push(query.types.map((type) => `${type}s`).join(', '));
  for (const [name, value] of Object.entries(query.filters ?? {})) parts.push(`${name}: ${String(value)}`);
  if (query.from !== undefined) parts.push(`from ${formatDateTime(query.from)}`);
  if (query.to !== undefined) parts.push(`until ${formatDateTime(query.to)}`);
  return parts.length === 0 ? 'everything, newest first' : parts.join(' · ');
}

/** The search form and the results. */
export function SearchPage() {
  const [params, setParams] = useSearchParams();
  const { project } = useWorkspace();
  const q = params.get('q')?.trim() ?? '';
  const ask = params.get('ask') === '1';
  const type = typeOf(params.get('type'));
  const limit = limitOf(params.get('limit'));
  const results = useInfiniteQuery({
    queryKey: ['search', project.id, q, ask, type, limit],
    enabled: q !== '',
    // Kept while the page lives: going back to the results asks neither the server nor the model again.
    staleTime: Number.POSITIVE_INFINITY,
    initialPageParam: undefined as SearchQuery | undefined,
    queryFn: ({ pageParam }) =>
      api<SearchAnswer>(
        'POST',
        '/v1/search',
        pageParam ?? {
          ...(ask ? { question: q } : { q }),
          ...(type === undefined ? {} : { types: [type] }),
          limit,
        },
      ),
    // The next page is the query that ran (a question's is the model's structured query), with
    // the cursor: the model is asked once per search, not once per page.
    getNextPageParam: (last, pages): SearchQuery | undefined => {
      if (last.nextCursor === undefined) return undefined;
      const first = pages[0];
      const ran: SearchQuery = first?.interpreted?.query ?? {
        q,
        ...(type === undefined ? {} : { types: [type] }),
      };
      const { cursor: _cursor, ...query } = ran;
      return { ...query, limit, cursor: last.nextCursor };
    },
  });
  const rows = results.data?.pages.flatMap((page) => page.items) ?? [];
  const interpreted = results.data?.pages[0]?.interpreted;

  function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    const next = new URLSearchParams();
    for (const name of ['org', 'project', 'limit']) {
      const value = params.get(name);
      if (value !== null) next.set(name, value);
    }
    const words = String(form.get('q') ?? '').trim();
    if (words !== '') next.set('q', words);
    if (form.get('ask') === 'on') next.set('ask', '1');
    const chosen = String(form.get('type') ?? '');
    if (chosen !== '') next.set('type', chosen);
    setParams(next);
  }

  return (
    <section aria-labelledby="search-title" className="search-page">
      <h1 id="search-title">Search</h1>
      {/* The key resets the uncontrolled fields when the URL changes (the header's box, back). */}
      <search aria-label="Search">
        <form className="search-form" onSubmit={submit} key={params.toString()}>
          <label className="search-words">
            Search for
            <input
              name="q"
              type="search"
              defaultValue={q}
              placeholder="An error, a URL, a user, a release… or a question"
            />
          </label>
          <label>
            Show
            <select name="type" defaultValue={type ?? ''}>
              <option value="">Sessions, calls and issues</option>
              {TYPES.map(([value, label]) => (
                <option key={value} value={value}>
                  {label}
                </option>
              ))}
            </select>
          </label>
          <label className="inline search-ask">
            <input name="ask" type="checkbox" defaultChecked={ask} />
            Ask in words (a model turns the question into filters, when AI is on)
          </label>
          <button type="submit" className="primary">
            Search
          </button>
        </form>
      </search>
      {q === '' ? (
        <p className="hint">
          Words are matched in errors and custom events, call failures and findings, issue titles, URLs, users
          and releases; <code>"a phrase"</code> in order, <code>-word</code> to leave out. Or tick “Ask in
          words” and ask: “failed calls on Safari last week”.
        </p>
      ) : null}
      {interpreted === undefined ? null : (
        <p className="search-interpreted">
          Searched for <strong>{describeQuery(interpreted.query)}</strong>.{' '}
          <span className="hint">
            {interpreted.ai.used && interpreted.ai.model !== undefined && interpreted.ai.reason === undefined
              ? `The model ${interpreted.ai.model} turned your question into this search.`
              : (interpreted.ai.reason ?? '')}
          </span>
        </p>
      )}
      {results.error ? <ErrorText>{results.error.message}</ErrorText> : null}
      {results.isFetching && rows.length === 0 ? <p aria-busy="true">Searching…</p> : null}
      <p role="status" className="search-count">
        {results.isSuccess
          ? rows.length === 0
            ? 'Nothing matches.'
            : `${rows.length === 1 ? '1 result' : `${rows.length} results`}${results.hasNextPage ? ', more below' : ''}.`
          : ''}
      </p>
      {rows.length === 0 ? null : (
        <ol className="search-results" aria-label="Results">
          {rows.map((row) => (
            <ResultItem key={`${row.type}:${row.id}`} result={row} />
          ))}
        </ol>
      )}
      {results.hasNextPage ? (
        <button type="button" disabled={results.isFetchingNextPage} onClick={() => results.fetchNextPage()}>
          {results.isFetchingNextPage ? 'Loading…' : 'Load more results'}
        </button>
      ) : null}
    </section>
  );
}

/** What a result is, in a line of facts. */
function factsOf(result: SearchResult): string[] {
  if (result.type === 'session') {
    const { session } = result;
    return [
      `started ${formatDateTime(result.t)}`,
      formatDuration(session.durationMs),
      session.errorCount === 1 ? '1 error' : `${session.errorCount} errors`,
      session.browser === undefined ? undefined : session.browser.name,
      session.os,
      session.device,
      session.user === undefined ? undefined : (session.user.name ?? session.user.email ?? session.user.id),
      session.release === undefined ? undefined : `release ${session.release}`,
    ].filter((fact): fact is string => fact !== undefined);
  }
  if (result.type === 'call') {
    const { call } = result;
    return [
      `started ${formatDateTime(result.t)}`,
      call.failedToConnect
        ? `failed to connect${call.failureReason === undefined ? '' : ` (${call.failureReason})`}`
        : call.qualityScore === undefined
          ? 'connected'
          : `quality ${call.qualityScore}`,
      call.relayed ? 'relayed' : 'direct',
      call.networkType,
      call.browser,
      call.durationMs === undefined
        ? call.state === 'open'
          ? 'still open'
          : undefined
        : formatDuration(call.durationMs),
      ...call.findings.map(detectorKindLabel),
    ].filter((fact): fact is string => fact !== undefined);
  }
  const { issue } = result;
  return [
    `last seen ${formatDateTime(result.t)}`,
    `${issue.severity} severity`,
    issue.status,
    `${issue.occurrences} ${issue.occurrences === 1 ? 'occurrence' : 'occurrences'}, ${issue.count24h} in the last 24 h`,
  ];
}

function ResultItem({ result }: { result: SearchResult }) {
  return (
    <li className={`search-result search-${result.type}`} data-result-id={result.id}>
      <span className="search-type">{TYPE_WORDS[result.type]}</span>
      <div className="search-body">
        <AppLink to={result.url} className="search-title">
          {result.title}
        </AppLink>
        {result.snippet === undefined ? null : <p className="search-snippet">{result.snippet}</p>}
        <p className="search-facts">{factsOf(result).join(' · ')}</p>
      </div>
    </li>
  );
}
