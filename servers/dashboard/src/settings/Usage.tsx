import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useId, useState } from 'react';
import { useSearchParams } from 'react-router';
import { api } from '../api.ts';
import { formatDateTime, formatDuration } from '../ui/format.ts';
import { ErrorText, QueryState } from '../ui/status.tsx';
import { useWorkspace } from '../ui/workspace.tsx';
import { describedBy, FieldProblem, fieldProblems, StatusText } from './parts.tsx';
import { administers } from './permissions.ts';
import { ReadOnlyNote, SettingsLayout } from './SettingsLayout.tsx';

// What the organization uses (servers/api/README.md, Usage and caps): this month against the caps
// that apply, with the pause they cause at 100 %; the organization's own caps (admins and owners
// change them, everyone else reads them); totals and each project's part over a range of days.

/** The counts of `GET /v1/orgs/{orgId}/usage`, per range, project or day. */
interface UsageTotals {
  sessions: number;
  chunks: number;
  ingestedBytes: number;
  storedBytes: number;
  calls: number;
  callSeconds: number;
  spans: number;
  logRecords: number;
  aiTokens: number;
}

/** A cap per capped metric; null: none. */
interface Caps {
  sessions: number | null;
  storedBytes: number | null;
  aiTokens: number | null;
}

type CappedMetric = keyof Caps;

interface MetricState {
  used: number;
  cap: number | null;
  /** Of the cap, rounded down; null without a cap. */
  percent: number | null;
}

/** This month against the caps (`month` of the usage answer; also `PATCH …/billing/caps`'s answer). */
interface UsageMonth {
  month: string;
  /** The caps that apply: the lower of the organization's own and its plan's. */
  caps: Caps;
  ownCaps: Caps;
  usage: Record<CappedMetric, MetricState>;
  recordingPaused: boolean;
  aiPaused: boolean;
  resetsAt: string;
}

/** `GET /v1/orgs/{orgId}/usage`. */
interface Usage {
  organizationId: string;
  from: string;
  to: string;
  totals: UsageTotals;
  byProject: (UsageTotals & { projectId: string; name: string | null })[];
  month: UsageMonth;
}

const GIB = 1024 ** 3;
const UNITS = ['B', 'KB', 'MB', 'GB', 'TB'];

const number = (value: number) => value.toLocaleString();

/** `1536` → `1.5 KB` (1024-based, as the plans' GiB); negative for bytes removed. */
export function formatByteSize(bytes: number): string {
  let value = Math.abs(bytes);
  let unit = 0;
  while (value >= 1024 && unit < UNITS.length - 1) {
    value /= 1024;
    unit += 1;
  }
  const text = unit === 0 ? String(value) : value.toFixed(1);
  return `${bytes < 0 ? '−' : ''}${text} ${UNITS[unit]}`;
}

/** Each capped metric: its name, its unit in the form, and how an amount reads. */
const CAPPED: {
  metric: CappedMetric;
  label: string;
  field: string;
  unit: number;
  format: (n: number) => string;
}[] = [
  { metric: 'sessions', label: 'Sessions this month', field: 'Sessions a month', unit: 1, format: number },
  { metric: 'storedBytes', label: 'Stored now', field: 'Stored (GB)', unit: GIB, format: formatByteSize },
  { metric: 'aiTokens', label: 'AI tokens this month', field: 'AI tokens a month', unit: 1, format: number },
];

/** The range's metrics, in words, in the order of the tables. */
const METRICS: { metric: keyof UsageTotals; label: string; format: (n: number) => string }[] = [
  { metric: 'sessions', label: 'Sessions', format: number },
  { metric: 'chunks', label: 'Chunks', format: number },
  { metric: 'ingestedBytes', label: 'Received', format: formatByteSize },
  { metric: 'storedBytes', label: 'Stored (change)', format: formatByteSize },
  { metric: 'calls', label: 'Calls', format: number },
  { metric: 'callSeconds', label: 'Call time', format: (seconds) => formatDuration(seconds * 1000) },
  { metric: 'spans', label: 'Spans', format: number },
  { metric: 'logRecords', label: 'Log records', format: number },
  { metric: 'aiTokens', label: 'AI tokens', format: number },
];

/** `/settings/usage`: for everyone in the organization; admins and owners set its caps. */
export function UsagePage() {
  const { organization } = useWorkspace();
  const [params, setParams] = useSearchParams();
  const from = params.get('from') ?? '';
  const to = params.get('to') ?? '';
  const usageOf = (range: { from: string; to: string }) => ({
    queryKey: ['settings', 'usage', organization.id, range.from, range.to],
    queryFn: () => {
      const query = new URLSearchParams();
      if (range.from !== '') query.set('from', range.from);
      if (range.to !== '') query.set('to', range.to);
      return api<Usage>('GET', `/v1/orgs/${organization.id}/usage${query.size === 0 ? '' : `?${query}`}`);
    },
    retry: false,
  });
  // This month comes with every answer; it is asked with the default range (this month), which is
  // also the range's query when the URL names none, so a refused range leaves it on screen.
  const current = useQuery(usageOf({ from: '', to: '' }));
  const usage = useQuery(usageOf({ from, to }));
  function chooseRange(range: { from: string; to: string }) {
    setParams((previous) => {
      const next = new URLSearchParams(previous);
      for (const name of ['from', 'to'] as const)
        if (range[name] === '') next.delete(name);
        else next.set(name, range[name]);
      return next;
    });
  }
  const month = current.data?.month;
  return (
    <SettingsLayout title="Usage">
      <p>
        What {organization.name} records and stores, counted per project and day (UTC). Sessions and AI tokens
        count per calendar month; stored bytes are what is stored now.
      </p>
      {month === undefined ? (
        <QueryState query={current}>{() => null}</QueryState>
      ) : (
        <>
          <ThisMonth month={month} />
          <CapsForm month={month} />
        </>
      )}
      <RangeSection
        key={`${from}/${to}`}
        from={from}
        to={to}
        usage={usage.data}
        error={usage.error}
        pending={usage.isFetching}
        onChoose={chooseRange}
      />
    </SettingsLayout>
  );
}

function ThisMonth({ month }: { month: UsageMonth }) {
  return (
    <section className="settings-section" aria-labelledby="usage-month-title">
      <h2 id="usage-month-title">This month ({month.month}, UTC)</h2>
      {month.recordingPaused ? (
        <p className="settings-note settings-paused" role="note" data-testid="recording-paused">
          <strong>Recording is paused</strong>: a sessions or stored-bytes cap is reached. SDKs start no new
          session and new sessions are refused until the month resets or a cap is raised; sessions already
          started go on for an hour.
        </p>
      ) : null}
      {month.aiPaused ? (
        <p className="settings-note settings-paused" role="note" data-testid="ai-paused">
          <strong>The model is paused</strong>: the AI token cap is reached. Answers are deterministic until
          the month resets or the cap is raised.
        </p>
      ) : null}
      <table className="settings-usage-month">
        <caption className="visually-hidden">This month against the caps</caption>
        <thead>
          <tr>
            <th scope="col">Metric</th>
            <th scope="col">Used</th>
            <th scope="col">Cap</th>
            <th scope="col">Of the cap</th>
          </tr>
        </thead>
        <tbody>
          {CAPPED.map(({ metric, label, format }) => {
            const state = month.usage[metric];
            return (
              <tr key={metric} data-metric={metric}>
                <th scope="row">{label}</th>
                <td>{format(state.used)}</td>
                <td>{state.cap === null ? 'No cap' : format(state.cap)}</td>
                <td>
                  {state.percent === null ? (
                    '—'
                  ) : (
                    <span className="settings-usage-percent">
                      <span className="settings-usage-bar" aria-hidden="true">
                        <span
                          className={state.percent >= 100 ? 'full' : state.percent >= 80 ? 'high' : undefined}
                          style={{ width: `${Math.min(state.percent, 100)}%` }}
                        />
                      </span>
                      {state.percent} %
                    </span>
                  )}
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
      <p className="settings-hint">
        A cap is the lower of the organization's own (below) and its plan's. At 80 % and 100 % the
        organization's account notification rules are told; at 100 % of sessions or stored bytes, recording
        pauses. Monthly counts reset on{' '}
        <time dateTime={month.resetsAt}>{formatDateTime(month.resetsAt)}</time>.
      </p>
    </section>
  );
}

/**
 * The amount a field holds, in the API's unit; `null` for an empty field. What is no number is
 * sent as typed, for the API to refuse by its field.
 */
function amountOf(text: string, unit: number, original: number | null): number | string | null {
  if (text.trim() === '') return null;
  // Unchanged, the stored value as it is (a size shown rounded to GB is not rounded back).
  if (original !== null && text === textOf(original, unit)) return original;
  const value = Number(text);
  return Number.isFinite(value) ? Math.round(value * unit) : text;
}

function textOf(amount: number | null, unit: number): string {
  if (amount === null) return '';
  return unit === 1 ? String(amount) : String(Number((amount / unit).toFixed(3)));
}

function textsOf(caps: Caps): Record<CappedMetric, string> {
  return {
    sessions: textOf(caps.sessions, 1),
    storedBytes: textOf(caps.storedBytes, GIB),
    aiTokens: textOf(caps.aiTokens, 1),
  };
}

/** The organization's own caps: `PATCH /v1/orgs/{orgId}/billing/caps`; read-only for members and viewers. */
function CapsForm({ month }: { month: UsageMonth }) {
  const { organization } = useWorkspace();
  const queryClient = useQueryClient();
  const editable = administers(organization.role);
  const [draft, setDraft] = useState(() => textsOf(month.ownCaps));
  const [saved, setSaved] = useState<string>();
  const hintId = useId();
  const problemId = useId();
  const save = useMutation({
    mutationFn: (caps: Record<CappedMetric, number | string | null>) =>
      api<UsageMonth>('PATCH', `/v1/orgs/${organization.id}/billing/caps`, caps),
    onMutate: () => setSaved(undefined),
    onSuccess: async (updated) => {
      // The form goes on from what the server stored.
      setDraft(textsOf(updated.ownCaps));
      await queryClient.invalidateQueries({ queryKey: ['settings', 'usage', organization.id] });
      setSaved(`Saved: ${organization.name}'s own caps are set.`);
    },
  });
  const problems = fieldProblems(save.error?.message);
  const general = save.error !== null && Object.keys(problems).length === 0 ? save.error.message : undefined;
  function submit(event: FormEvent) {
    event.preventDefault();
    save.mutate({
      sessions: amountOf(draft.sessions, 1, month.ownCaps.sessions),
      storedBytes: amountOf(draft.storedBytes, GIB, month.ownCaps.storedBytes),
      aiTokens: amountOf(draft.aiTokens, 1, month.ownCaps.aiTokens),
    });
  }
  return (
    <section className="settings-section" aria-labelledby="usage-caps-title">
      <h2 id="usage-caps-title">{organization.name}'s own caps</h2>
      {editable ? null : <ReadOnlyNote what="the organization's caps" />}
      <form onSubmit={submit} noValidate className="settings-form" aria-label="Own caps">
        <fieldset disabled={!editable} className="settings-fieldset-plain">
          <div className="settings-grid">
            {CAPPED.map(({ metric, field, unit }) => {
              const problem = problems[metric];
              return (
                <div key={metric} className="settings-field">
                  <label>
                    {field}
                    <input
                      type="number"
                      min={0}
                      step={unit === 1 ? 1 : 'any'}
                      inputMode={unit === 1 ? 'numeric' : 'decimal'}
                      value={draft[metric]}
                      placeholder="No cap of its own"
                      onChange={(event) =>
                        setDraft((current) => ({ ...current, [metric]: event.target.value }))
                      }
                      {...describedBy(problem === undefined ? undefined : `${problemId}-${metric}`, hintId)}
                    />
                  </label>
                  {problem === undefined ? null : (
                    <FieldProblem id={`${problemId}-${metric}`} field={metric}>
                      {problem}
                    </FieldProblem>
                  )}
                </div>
              );
            })}
          </div>
          <p className="hint" id={hintId}>
            Empty: no cap of the organization's own (its plan may still cap). Stored bytes in GB of 1024³
            bytes.
          </p>
        </fieldset>
        {general === undefined ? null : <ErrorText>{general}</ErrorText>}
        {Object.keys(problems).length === 0 ? null : (
          <ErrorText>The caps were not saved: see the fields marked.</ErrorText>
        )}
        {editable ? (
          <div className="settings-actions">
            <button type="submit" className="primary" disabled={save.isPending}>
              Save caps
            </button>
            {saved === undefined ? null : <StatusText>{saved}</StatusText>}
          </div>
        ) : null}
      </form>
    </section>
  );
}

/** Totals and each project's part over a range of days (the URL's `?from=&to=`, default this month). */
function RangeSection({
  from,
  to,
  usage,
  error,
  pending,
  onChoose,
}: {
  from: string;
  to: string;
  usage: Usage | undefined;
  error: Error | null;
  pending: boolean;
  onChoose: (range: { from: string; to: string }) => void;
}) {
  const [draft, setDraft] = useState({ from, to });
  const hintId = useId();
  const problemId = useId();
  const message = error?.message;
  // The API names the day it refuses (`/from: …`, or "`from` must not be after `to`").
  const refused = (field: 'from' | 'to') =>
    message !== undefined &&
    (fieldProblems(message)[field] !== undefined || message.includes(`\`${field}\``));
  function submit(event: FormEvent) {
    event.preventDefault();
    onChoose(draft);
  }
  const shown = usage !== undefined && error === null;
  return (
    <section className="settings-section" aria-labelledby="usage-range-title">
      <h2 id="usage-range-title">{shown ? `From ${usage.from} to ${usage.to}` : 'Over a range of days'}</h2>
      <form onSubmit={submit} noValidate className="settings-row settings-inline-form" aria-label="Range">
        {(['from', 'to'] as const).map((field) => (
          <label key={field}>
            {field === 'from' ? 'From (UTC)' : 'To (UTC, included)'}
            <input
              type="date"
              value={draft[field]}
              onChange={(event) => setDraft((current) => ({ ...current, [field]: event.target.value }))}
              {...describedBy(refused(field) ? problemId : undefined, hintId)}
            />
          </label>
        ))}
        <button type="submit" disabled={pending}>
          Show
        </button>
      </form>
      <p className="settings-hint" id={hintId}>
        Empty: from the first of this month, to today. At most 366 days.
      </p>
      {message === undefined ? null : (
        <p className="error" role="alert" id={problemId}>
          {message}
        </p>
      )}
      {usage === undefined || !shown ? null : (
        <>
          <h3 className="settings-subheading">Totals</h3>
          <table className="settings-usage-totals" data-testid="usage-totals">
            <caption className="visually-hidden">
              Totals from {usage.from} to {usage.to}
            </caption>
            <tbody>
              {METRICS.map(({ metric, label, format }) => (
                <tr key={metric} data-metric={metric}>
                  <th scope="row">{label}</th>
                  <td>{format(usage.totals[metric])}</td>
                </tr>
              ))}
            </tbody>
          </table>
          <h3 className="settings-subheading">By project</h3>
          {usage.byProject.length === 0 ? (
            <p>Nothing was used in this range.</p>
          ) : (
            <div className="settings-scroll">
              <table data-testid="usage-by-project">
                <caption className="visually-hidden">
                  By project from {usage.from} to {usage.to}, largest first
                </caption>
                <thead>
                  <tr>
                    <th scope="col">Project</th>
                    {METRICS.map(({ metric, label }) => (
                      <th scope="col" key={metric}>
                        {label}
                      </th>
                    ))}
                  </tr>
                </thead>
                <tbody>
                  {usage.byProject.map((project) => (
                    <tr key={project.projectId} data-project-id={project.projectId}>
                      <th scope="row">{project.name ?? `Deleted project ${project.projectId}`}</th>
                      {METRICS.map(({ metric, format }) => (
                        <td key={metric} data-metric={metric}>
                          {format(project[metric])}
                        </td>
                      ))}
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          )}
        </>
      )}
    </section>
  );
}
