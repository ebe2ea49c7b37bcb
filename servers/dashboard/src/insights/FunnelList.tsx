import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useNavigate, useSearchParams } from 'react-router';
import { api, type Page } from '../api.ts';
import { formatDuration } from '../ui/format.ts';
import { AppLink, useScopedHref } from '../ui/links.tsx';
import { ErrorText, QueryState } from '../ui/status.tsx';
import { useMayWriteFunnels } from './FunnelBuilder.tsx';
import { describeStep } from './funnel-draft.ts';
import { InsightsTabs, RangePicker, rangeOf, rangeTimes } from './parts.tsx';
import type { Funnel, FunnelDraft, FunnelSuggestions } from './types.ts';
import './insights.css';

function Suggestion({ sessions, draft, index }: { sessions: number; draft: FunnelDraft; index: number }) {
  const navigate = useNavigate();
  const scoped = useScopedHref();
  const queryClient = useQueryClient();
  const mayWrite = useMayWriteFunnels();
  const save = useMutation({
    mutationFn: () => api<Funnel>('POST', '/v1/funnels', draft),
    onSuccess: (saved) => {
      void queryClient.invalidateQueries({ queryKey: ['funnels'] });
      navigate(scoped(`/funnels/${saved.id}`));
    },
  });
  const title = `suggestion-${index}`;
  return (
    <li data-suggestion={draft.name}>
      <h3 id={title}>{draft.name}</h3>
      <p>
        Walked by {sessions} {sessions === 1 ? 'session' : 'sessions'}:{' '}
        {draft.steps.map(describeStep).join(' → ')}
      </p>
      {mayWrite ? (
        <div className="actions">
          <button
            type="button"
            aria-describedby={title}
            disabled={save.isPending}
            onClick={() => save.mutate()}
          >
            Save this funnel
          </button>
          <button
            type="button"
            aria-describedby={title}
            onClick={() => navigate(scoped('/funnels/new'), { state: { draft } })}
          >
            Edit before saving
          </button>
        </div>
      ) : null}
      {save.error === null ? null : <ErrorText>{save.error.message}</ErrorText>}
    </li>
  );
}

/** `/funnels`: the saved funnels, a new one, and drafts from the routes sessions walked. */
export function FunnelList() {
  const [params] = useSearchParams();
  const mayWrite = useMayWriteFunnels();
  const { from, to } = rangeTimes(rangeOf(params).ms);
  const funnels = useQuery({
    queryKey: ['funnels'],
    queryFn: () => api<Page<Funnel>>('GET', '/v1/funnels?limit=200'),
  });
  const suggestions = useQuery({
    queryKey: ['funnel-suggestions', from, to],
    queryFn: () =>
      api<FunnelSuggestions>('GET', `/v1/funnels/suggestions?${new URLSearchParams({ from, to })}`),
  });
  return (
    <section aria-labelledby="funnels-title" className="insights-page">
      <h1 id="funnels-title">Funnels</h1>
      <InsightsTabs />
      {mayWrite ? (
        <p>
          <AppLink to="/funnels/new">New funnel</AppLink>
        </p>
      ) : (
        <p className="hint">Viewers read funnels; members, admins and owners make and change them.</p>
      )}
      <QueryState query={funnels}>
        {(page) =>
          page.items.length === 0 ? (
            <p>No funnel yet.</p>
          ) : (
            <table data-table="funnels">
              <thead>
                <tr>
                  <th scope="col">Name</th>
                  <th scope="col">Steps</th>
                  <th scope="col">Window</th>
                  <th scope="col">Counted by</th>
                </tr>
              </thead>
              <tbody>
                {page.items.map((funnel) => (
                  <tr key={funnel.id} data-funnel-id={funnel.id}>
                    <th scope="row">
                      <AppLink to={`/funnels/${funnel.id}`}>{funnel.name}</AppLink>
                    </th>
                    <td>{funnel.steps.map(describeStep).join(' → ')}</td>
                    <td>{formatDuration(funnel.windowMs)}</td>
                    <td>{funnel.countBy}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          )
        }
      </QueryState>
      <section aria-labelledby="suggestions-title">
        <h2 id="suggestions-title">Suggested funnels</h2>
        <p className="hint">The route sequences sessions walked most in this range, as drafts.</p>
        <RangePicker />
        <QueryState query={suggestions}>
          {(answer) =>
            answer.items.length === 0 ? (
              <p>No sequence of pages walked yet.</p>
            ) : (
              <ul className="funnel-bars">
                {answer.items.map((item, index) => (
                  <Suggestion
                    key={item.draft.name}
                    index={index}
                    sessions={item.sessions}
                    draft={item.draft}
                  />
                ))}
              </ul>
            )
          }
        </QueryState>
      </section>
    </section>
  );
}
