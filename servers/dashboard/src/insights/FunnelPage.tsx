import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { useNavigate, useParams, useSearchParams } from 'react-router';
import { api } from '../api.ts';
import { formatDateTime, formatDuration } from '../ui/format.ts';
import { AppLink, useScopedHref } from '../ui/links.tsx';
import { ErrorText, QueryState } from '../ui/status.tsx';
import { FunnelForm, useMayWriteFunnels } from './FunnelBuilder.tsx';
import { describeStep } from './funnel-draft.ts';
import { formatRate, InsightsTabs, RangePicker, rangeOf, rangeTimes } from './parts.tsx';
import type { DroppedOff, Funnel, FunnelResults } from './types.ts';
import './insights.css';

/** The in-app path of a replay link (`links.replay` is on the app's public URL). */
function replayPath(link: string): string {
  const url = new URL(link, window.location.href);
  return `${url.pathname}${url.search}`;
}

function DropOffs({ step, dropped, count }: { step: number; dropped: DroppedOff[]; count: number }) {
  if (count === 0) return null;
  return (
    <details data-dropoffs={step}>
      <summary>
        {count} dropped off before this step{dropped.length < count ? ` (the latest ${dropped.length})` : ''}
      </summary>
      <ul>
        {dropped.map((unit) => (
          <li key={`${unit.sessionId}:${unit.at}`}>
            <AppLink to={replayPath(unit.links.replay)}>
              Replay {unit.sessionId}
              {unit.userId === undefined ? '' : ` (user ${unit.userId})`}
            </AppLink>{' '}
            at {formatDateTime(unit.at)}
          </li>
        ))}
      </ul>
    </details>
  );
}

function Results({ results }: { results: FunnelResults }) {
  const first = results.steps[0]?.count ?? 0;
  const unit = results.countBy === 'user' ? 'users' : 'sessions';
  const last = results.steps.at(-1);
  return (
    <>
      <p data-overall-conversion={last?.conversionFromFirst ?? ''}>
        {first} {unit} started; {last?.count ?? 0} converted ({formatRate(last?.conversionFromFirst)}), within{' '}
        {formatDuration(results.windowMs)}.
      </p>
      <ol className="funnel-bars" data-list="funnel-steps">
        {results.steps.map((step, index) => (
          // biome-ignore lint/suspicious/noArrayIndexKey: a step is its position (the same route may be two steps)
          <li key={index} data-step={index + 1}>
            <strong>
              {index + 1}. {describeStep(step.step)}
            </strong>
            <span
              className="funnel-bar"
              role="img"
              aria-label={`${step.count} of ${first} ${unit} (${formatRate(step.conversionFromFirst)})`}
            >
              <span style={{ width: `${first === 0 ? 0 : (step.count / first) * 100}%` }} />
            </span>
            <span data-count={step.count}>
              {step.count} {unit}
            </span>
            {index === 0 ? null : (
              <>
                {' · '}
                <span data-conversion-previous={step.conversionFromPrevious ?? ''}>
                  {formatRate(step.conversionFromPrevious)} of the previous step
                </span>
                {' · '}
                <span data-conversion-first={step.conversionFromFirst ?? ''}>
                  {formatRate(step.conversionFromFirst)} of the first
                </span>
                {' · '}
                <span data-median={step.medianTimeFromPreviousMs ?? ''}>
                  median time from the previous step{' '}
                  {step.medianTimeFromPreviousMs === null
                    ? '—'
                    : formatDuration(step.medianTimeFromPreviousMs)}
                </span>
              </>
            )}
            <DropOffs step={index + 1} dropped={step.droppedOff} count={step.droppedOffCount} />
          </li>
        ))}
      </ol>
    </>
  );
}

function FunnelView({ funnel }: { funnel: Funnel }) {
  const [params] = useSearchParams();
  const [editing, setEditing] = useState(false);
  const [confirmDelete, setConfirmDelete] = useState(false);
  const mayWrite = useMayWriteFunnels();
  const navigate = useNavigate();
  const scoped = useScopedHref();
  const queryClient = useQueryClient();
  const { from, to } = rangeTimes(rangeOf(params).ms);
  const results = useQuery({
    queryKey: ['funnel-results', funnel.id, from, to, funnel.updatedAt],
    queryFn: () =>
      api<FunnelResults>(
        'GET',
        `/v1/funnels/${encodeURIComponent(funnel.id)}/results?${new URLSearchParams({ from, to })}`,
      ),
  });
  const remove = useMutation({
    mutationFn: () => api('DELETE', `/v1/funnels/${encodeURIComponent(funnel.id)}`),
    onSuccess: () => {
      void queryClient.invalidateQueries({ queryKey: ['funnels'] });
      navigate(scoped('/funnels'));
    },
  });
  return (
    <>
      <h1 id="funnel-title">{funnel.name}</h1>
      <InsightsTabs />
      <p>
        <AppLink to="/funnels">← Funnels</AppLink>
      </p>
      <p className="hint">
        Counted by {funnel.countBy}, within {formatDuration(funnel.windowMs)} of the first step.
      </p>
      {mayWrite ? (
        <div className="actions">
          {editing ? null : (
            <button type="button" onClick={() => setEditing(true)}>
              Edit funnel
            </button>
          )}
          {confirmDelete ? (
            <>
              <button type="button" onClick={() => remove.mutate()} disabled={remove.isPending}>
                Yes, delete this funnel
              </button>
              <button type="button" onClick={() => setConfirmDelete(false)}>
                Cancel
              </button>
            </>
          ) : (
            <button type="button" onClick={() => setConfirmDelete(true)}>
              Delete funnel
            </button>
          )}
          {remove.error === null ? null : <ErrorText>{remove.error.message}</ErrorText>}
        </div>
      ) : null}
      {editing ? (
        <FunnelForm
          funnel={funnel}
          onSaved={(saved) => {
            queryClient.setQueryData(['funnel', saved.id], saved);
            setEditing(false);
          }}
          onCancel={() => setEditing(false)}
        />
      ) : null}
      <section aria-labelledby="results-title">
        <h2 id="results-title">Results</h2>
        <RangePicker />
        <QueryState query={results}>{(data) => <Results results={data} />}</QueryState>
      </section>
    </>
  );
}

/** `/funnels/:id`: the funnel's results (bars, conversions, median times, drop-offs), editing. */
export function FunnelPage() {
  const { id = '' } = useParams();
  const funnel = useQuery({
    queryKey: ['funnel', id],
    queryFn: () => api<Funnel>('GET', `/v1/funnels/${encodeURIComponent(id)}`),
  });
  return (
    <section aria-labelledby="funnel-title" className="insights-page">
      <QueryState query={funnel}>{(data) => <FunnelView funnel={data} />}</QueryState>
    </section>
  );
}
