import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useId, useState } from 'react';
import { useLocation, useNavigate } from 'react-router';
import { api } from '../api.ts';
import { AppLink, useScopedHref } from '../ui/links.tsx';
import { ErrorText } from '../ui/status.tsx';
import { useWorkspace } from '../ui/workspace.tsx';
import { emptyStep, type FormDraft, type StepDraft, toBody, toForm, WINDOW_UNITS } from './funnel-draft.ts';
import { InsightsTabs, rangeTimes } from './parts.tsx';
import type { Funnel, FunnelDraft, FunnelStep, VitalsAnswer } from './types.ts';
import './insights.css';

const STEP_TYPES: Array<[FunnelStep['type'], string]> = [
  ['pageview', 'Page view'],
  ['event', 'Custom event'],
  ['click', 'Click'],
];

/** Whether the person may save funnels (`sessions:write`: not a viewer; the API refuses anyway). */
export function useMayWriteFunnels(): boolean {
  return useWorkspace().organization.role !== 'viewer';
}

function StepFields({
  step,
  index,
  count,
  routesList,
  onChange,
  onMove,
  onRemove,
}: {
  step: StepDraft;
  index: number;
  count: number;
  routesList: string;
  onChange(changes: Partial<StepDraft>): void;
  onMove(by: -1 | 1): void;
  onRemove(): void;
}) {
  const label = `Step ${index + 1}`;
  return (
    <li className="funnel-step-form" data-step={index + 1}>
      <strong>{label}</strong>
      <label>
        Type
        <select
          aria-label={`${label} type`}
          value={step.type}
          onChange={(event) => onChange({ type: event.target.value as FunnelStep['type'] })}
        >
          {STEP_TYPES.map(([type, text]) => (
            <option key={type} value={type}>
              {text}
            </option>
          ))}
        </select>
      </label>
      {step.type === 'pageview' ? (
        <label>
          Route
          <input
            aria-label={`${label} route`}
            list={routesList}
            value={step.route}
            placeholder="/pricing"
            onChange={(event) => onChange({ route: event.target.value })}
          />
        </label>
      ) : null}
      {step.type === 'event' ? (
        <>
          <label>
            Event name
            <input
              aria-label={`${label} event name`}
              value={step.name}
              placeholder="signup"
              onChange={(event) => onChange({ name: event.target.value })}
            />
          </label>
          <label>
            Properties (name=value, one a line)
            <textarea
              aria-label={`${label} properties`}
              rows={2}
              value={step.properties}
              onChange={(event) => onChange({ properties: event.target.value })}
            />
          </label>
        </>
      ) : null}
      {step.type === 'click' ? (
        <label>
          Element selector
          <input
            aria-label={`${label} selector`}
            value={step.selector}
            placeholder="main > button.buy"
            onChange={(event) => onChange({ selector: event.target.value })}
          />
        </label>
      ) : null}
      <span className="actions">
        <button
          type="button"
          onClick={() => onMove(-1)}
          disabled={index === 0}
          aria-label={`Move step ${index + 1} up`}
        >
          ↑
        </button>
        <button
          type="button"
          onClick={() => onMove(1)}
          disabled={index === count - 1}
          aria-label={`Move step ${index + 1} down`}
        >
          ↓
        </button>
        <button
          type="button"
          onClick={onRemove}
          disabled={count <= 2}
          aria-label={`Remove step ${index + 1}`}
        >
          Remove
        </button>
      </span>
    </li>
  );
}

/**
 * The builder: name, ordered steps (page view of a route, custom event with properties, click on
 * a selector), the conversion window and what is counted. `POST /v1/funnels` for a new funnel,
 * `PATCH /v1/funnels/{id}` for a saved one.
 */
export function FunnelForm({
  funnel,
  draft,
  onSaved,
  onCancel,
}: {
  funnel?: Funnel;
  draft?: FunnelDraft;
  onSaved(saved: Funnel): void;
  onCancel?(): void;
}) {
  const [form, setForm] = useState<FormDraft>(() => toForm(funnel ?? draft));
  const [problem, setProblem] = useState<string>();
  const queryClient = useQueryClient();
  const routesList = useId();
  const { from, to } = rangeTimes(30 * 24 * 3600_000);
  const routes = useQuery({
    queryKey: ['insights-routes', from, to],
    queryFn: () => api<VitalsAnswer>('GET', `/v1/vitals?${new URLSearchParams({ from, to, limit: '200' })}`),
  });
  const save = useMutation({
    mutationFn: (body: FunnelDraft) =>
      funnel === undefined
        ? api<Funnel>('POST', '/v1/funnels', body)
        : api<Funnel>('PATCH', `/v1/funnels/${encodeURIComponent(funnel.id)}`, body),
    onSuccess: (saved) => {
      void queryClient.invalidateQueries({ queryKey: ['funnels'] });
      void queryClient.invalidateQueries({ queryKey: ['funnel', saved.id] });
      void queryClient.invalidateQueries({ queryKey: ['funnel-results', saved.id] });
      onSaved(saved);
    },
  });
  const setStep = (index: number, changes: Partial<StepDraft>) =>
    setForm((current) => ({
      ...current,
      steps: current.steps.map((step, at) => (at === index ? { ...step, ...changes } : step)),
    }));
  function move(index: number, by: -1 | 1) {
    setForm((current) => {
      const steps = [...current.steps];
      const [step] = steps.splice(index, 1);
      if (step !== undefined) steps.splice(index + by, 0, step);
      return { ...current, steps };
    });
  }
  function submit(event: FormEvent) {
    event.preventDefault();
    const body = toBody(form);
    if (typeof body === 'string') {
      setProblem(body);
      return;
    }
    setProblem(undefined);
    save.mutate(body);
  }
  return (
    <form
      className="funnel-builder"
      onSubmit={submit}
      aria-label={funnel === undefined ? 'New funnel' : 'Edit funnel'}
    >
      <label>
        Name
        <input value={form.name} onChange={(event) => setForm({ ...form, name: event.target.value })} />
      </label>
      <fieldset>
        <legend>Steps, in order</legend>
        <datalist id={routesList}>
          {routes.data?.routes.map((row) => (
            <option key={row.route} value={row.route} />
          ))}
        </datalist>
        <ol style={{ listStyle: 'none', padding: 0, margin: 0 }}>
          {form.steps.map((step, index) => (
            <StepFields
              key={step.key}
              step={step}
              index={index}
              count={form.steps.length}
              routesList={routesList}
              onChange={(changes) => setStep(index, changes)}
              onMove={(by) => move(index, by)}
              onRemove={() => setForm({ ...form, steps: form.steps.filter((_, at) => at !== index) })}
            />
          ))}
        </ol>
        <button
          type="button"
          disabled={form.steps.length >= 10}
          onClick={() => setForm({ ...form, steps: [...form.steps, emptyStep()] })}
        >
          Add a step
        </button>
      </fieldset>
      <fieldset>
        <legend>Conversion window</legend>
        <div className="actions">
          <label>
            Within
            <input
              type="number"
              min={1}
              step="any"
              value={form.windowValue}
              onChange={(event) => setForm({ ...form, windowValue: Number(event.target.value) })}
            />
          </label>
          <label>
            Unit
            <select
              value={form.windowUnit}
              onChange={(event) => setForm({ ...form, windowUnit: event.target.value })}
            >
              {WINDOW_UNITS.map(([id, text]) => (
                <option key={id} value={id}>
                  {text}
                </option>
              ))}
            </select>
          </label>
        </div>
      </fieldset>
      <fieldset>
        <legend>Count by</legend>
        <div className="inline-choices">
          <label>
            <input
              type="radio"
              name="countBy"
              value="session"
              checked={form.countBy === 'session'}
              onChange={() => setForm({ ...form, countBy: 'session' })}
            />
            Session
          </label>
          <label>
            <input
              type="radio"
              name="countBy"
              value="user"
              checked={form.countBy === 'user'}
              onChange={() => setForm({ ...form, countBy: 'user' })}
            />
            User
          </label>
        </div>
      </fieldset>
      <div className="actions">
        <button type="submit" disabled={save.isPending}>
          {funnel === undefined ? 'Save funnel' : 'Save changes'}
        </button>
        {onCancel === undefined ? null : (
          <button type="button" onClick={onCancel}>
            Cancel
          </button>
        )}
      </div>
      {problem === undefined ? null : <ErrorText>{problem}</ErrorText>}
      {save.error === null ? null : <ErrorText>{save.error.message}</ErrorText>}
    </form>
  );
}

/** `/funnels/new` (a suggestion's draft comes in the navigation's state). */
export function NewFunnel() {
  const navigate = useNavigate();
  const scoped = useScopedHref();
  const mayWrite = useMayWriteFunnels();
  const draft = (useLocation().state as { draft?: FunnelDraft } | null)?.draft;
  return (
    <section aria-labelledby="new-funnel-title" className="insights-page">
      <h1 id="new-funnel-title">New funnel</h1>
      <InsightsTabs />
      <p>
        <AppLink to="/funnels">← Funnels</AppLink>
      </p>
      {mayWrite ? (
        <FunnelForm draft={draft} onSaved={(saved) => navigate(scoped(`/funnels/${saved.id}`))} />
      ) : (
        <p>Viewers read funnels; members, admins and owners make them.</p>
      )}
    </section>
  );
}
