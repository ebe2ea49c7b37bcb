import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, type ReactNode, useState } from 'react';
import { api, type Page } from '../api.ts';
import { ISSUE_KINDS, kindLabel, SEVERITIES } from '../issues/kinds.ts';
import { ErrorText, QueryState } from '../ui/status.tsx';
import { useWorkspace } from '../ui/workspace.tsx';
import { useChannels } from './Channels.tsx';
import { NotificationsLayout, useCanChangeNotifications } from './NotificationsLayout.tsx';
import { describeSource, type RuleDraft, toDraft, toRuleBody } from './rule-draft.ts';
import { CLUSTER_RULE_EVENTS, type Rule, SECURITY_EVENTS, THRESHOLD_EVENTS } from './types.ts';

const EVENT_WORDS: Record<string, string> = {
  'cluster.created': 'A new issue appears',
  'cluster.threshold': 'An issue reaches a number of occurrences in 24 h',
  'cluster.regressed': 'A resolved issue comes back in a newer release',
  'cluster.reopened': 'A resolved issue happens again',
  'error.new': 'A new browser error appears',
  'error.rate': 'A browser error reaches a number of occurrences in 24 h',
  'security.token_created': 'An API token is created',
  'security.sso_changed': 'Single sign-on settings change',
  'security.break_glass': 'Break-glass access is used',
  'privacy.leak_radar': 'The leak radar finds what masking should have hidden',
};

/** Notification rules: which events (issues, custom events, security) go to which channels. */
export function Rules() {
  const { project } = useWorkspace();
  const canChange = useCanChangeNotifications();
  const queryClient = useQueryClient();
  const channels = useChannels();
  const rules = useQuery({
    queryKey: ['rules', project.id],
    queryFn: () => api<Page<Rule>>('GET', '/v1/notifications/rules'),
  });
  const [editing, setEditing] = useState<Rule | 'new'>();
  const [deleting, setDeleting] = useState<string>();
  const remove = useMutation({
    mutationFn: (id: string) => api<void>('DELETE', `/v1/notifications/rules/${id}`),
    onSuccess: () => {
      setDeleting(undefined);
      void queryClient.invalidateQueries({ queryKey: ['rules', project.id] });
    },
  });
  const channelName = (id: string) => channels.data?.items.find((item) => item.id === id)?.name ?? id;
  return (
    <NotificationsLayout title="Rules">
      <p className="hint">
        Every notification reaches the inbox; a rule also sends the events it matches to its channels, at most
        once per throttle period for one issue and event.
      </p>
      <QueryState query={rules}>
        {(page) =>
          page.items.length === 0 ? (
            <p>No rule yet.</p>
          ) : (
            <table>
              <thead>
                <tr>
                  <th scope="col">Name</th>
                  <th scope="col">Listens to</th>
                  <th scope="col">Channels</th>
                  <th scope="col">Throttle</th>
                  <th scope="col">State</th>
                  {canChange ? <th scope="col">Actions</th> : null}
                </tr>
              </thead>
              <tbody>
                {page.items.map((rule) => (
                  <tr key={rule.id} data-rule-id={rule.id}>
                    <th scope="row">{rule.name}</th>
                    <td>{describeSource(rule.source, kindLabel)}</td>
                    <td>
                      {rule.channelIds.length === 0
                        ? 'inbox only'
                        : rule.channelIds.map(channelName).join(', ')}
                    </td>
                    <td>{rule.throttleMinutes === 0 ? 'none' : `${rule.throttleMinutes} min`}</td>
                    <td>{rule.enabled ? 'Enabled' : 'Disabled'}</td>
                    {canChange ? (
                      <td>
                        <div className="row-actions">
                          <button
                            type="button"
                            onClick={() => setEditing(rule)}
                            aria-label={`Edit ${rule.name}`}
                          >
                            Edit
                          </button>
                          <button
                            type="button"
                            onClick={() => setDeleting(rule.id)}
                            aria-label={`Delete ${rule.name}`}
                          >
                            Delete
                          </button>
                        </div>
                        {deleting === rule.id ? (
                          <div className="confirm">
                            Delete this rule? Its channels stop getting its events.{' '}
                            <button
                              type="button"
                              disabled={remove.isPending}
                              onClick={() => remove.mutate(rule.id)}
                            >
                              Delete rule
                            </button>{' '}
                            <button type="button" onClick={() => setDeleting(undefined)}>
                              Cancel
                            </button>
                          </div>
                        ) : null}
                      </td>
                    ) : null}
                  </tr>
                ))}
              </tbody>
            </table>
          )
        }
      </QueryState>
      {remove.error ? <ErrorText>{remove.error.message}</ErrorText> : null}
      {!canChange ? (
        <p className="hint">Viewers can see rules; adding or changing one needs the member role.</p>
      ) : editing === undefined ? (
        <p>
          <button type="button" onClick={() => setEditing('new')}>
            New rule
          </button>
        </p>
      ) : (
        <RuleForm
          key={editing === 'new' ? 'new' : editing.id}
          rule={editing === 'new' ? undefined : editing}
          channels={channels.data?.items ?? []}
          onDone={() => setEditing(undefined)}
        />
      )}
    </NotificationsLayout>
  );
}

/** An event type or an issue kind in words (event types with their name, as webhooks carry it). */
function eventLabel(value: string): ReactNode {
  const words = EVENT_WORDS[value];
  if (words === undefined) return ISSUE_KINDS[value] ?? value;
  return (
    <>
      {words} (<code>{value}</code>)
    </>
  );
}

function Checkboxes<Value extends string>({
  legend,
  options,
  chosen,
  onChange,
  hint,
  labelOf = eventLabel,
}: {
  labelOf?: (value: Value) => ReactNode;
  legend: string;
  options: readonly Value[];
  chosen: readonly Value[];
  onChange: (chosen: Value[]) => void;
  hint?: ReactNode;
}) {
  return (
    <fieldset>
      <legend>{legend}</legend>
      {hint === undefined ? null : <p className="hint">{hint}</p>}
      {options.map((option) => (
        <label key={option} className="check">
          <input
            type="checkbox"
            checked={chosen.includes(option)}
            onChange={(event) =>
              onChange(
                event.target.checked ? [...chosen, option] : chosen.filter((value) => value !== option),
              )
            }
          />
          {labelOf(option)}
        </label>
      ))}
    </fieldset>
  );
}

function RuleForm({
  rule,
  channels,
  onDone,
}: {
  rule: Rule | undefined;
  channels: { id: string; name: string }[];
  onDone: () => void;
}) {
  const { project } = useWorkspace();
  const queryClient = useQueryClient();
  const [draft, setDraft] = useState<RuleDraft>(() =>
    toDraft(
      rule,
      channels.map((channel) => channel.id),
    ),
  );
  const [problem, setProblem] = useState<string>();
  const set = <Key extends keyof RuleDraft>(key: Key, value: RuleDraft[Key]) =>
    setDraft((current) => ({ ...current, [key]: value }));
  const save = useMutation({
    mutationFn: (body: unknown) =>
      rule === undefined
        ? api<Rule>('POST', '/v1/notifications/rules', body)
        : api<Rule>('PATCH', `/v1/notifications/rules/${rule.id}`, body),
    onSuccess: () => {
      void queryClient.invalidateQueries({ queryKey: ['rules', project.id] });
      onDone();
    },
  });
  function submit(event: FormEvent) {
    event.preventDefault();
    const result = toRuleBody(draft);
    if ('problem' in result) {
      setProblem(result.problem);
      return;
    }
    setProblem(undefined);
    save.mutate(result.body);
  }
  const needsThreshold = draft.clusterEvents.some((event) => THRESHOLD_EVENTS.has(event));
  const title = rule === undefined ? 'New rule' : `Edit rule “${rule.name}”`;
  return (
    <form className="panel rule-form" aria-labelledby="rule-form-title" onSubmit={submit}>
      <h2 id="rule-form-title">{title}</h2>
      <label>
        Rule name
        <input
          value={draft.name}
          onChange={(event) => set('name', event.target.value)}
          required
          maxLength={128}
        />
      </label>
      <label className="check">
        <input
          type="checkbox"
          checked={draft.enabled}
          onChange={(event) => set('enabled', event.target.checked)}
        />
        Enabled
      </label>
      <label>
        Listens to
        <select value={draft.type} onChange={(event) => set('type', event.target.value as RuleDraft['type'])}>
          <option value="cluster">Issues (errors and call problems)</option>
          <option value="custom">Custom events (track() with a name)</option>
          <option value="security">Security events</option>
        </select>
      </label>
      {draft.type === 'cluster' ? (
        <>
          <Checkboxes
            legend="Issue events"
            options={CLUSTER_RULE_EVENTS}
            chosen={draft.clusterEvents}
            onChange={(value) => set('clusterEvents', value)}
          />
          {needsThreshold ? (
            <label>
              Threshold (occurrences in 24 hours)
              <input
                type="number"
                min={1}
                value={draft.threshold}
                onChange={(event) => set('threshold', event.target.value)}
                required
              />
            </label>
          ) : null}
          <Checkboxes
            legend="Issue kinds"
            hint="None checked: every kind."
            options={Object.keys(ISSUE_KINDS)}
            chosen={draft.kinds}
            onChange={(value) => set('kinds', value)}
          />
        </>
      ) : null}
      {draft.type === 'custom' ? (
        <>
          <label>
            Event name
            <input
              value={draft.customName}
              onChange={(event) => set('customName', event.target.value)}
              required
              maxLength={128}
              placeholder="checkout_failed"
            />
          </label>
          <label>
            Required properties (one name=value a line; "quotes" keep a number as text)
            <textarea
              value={draft.properties}
              onChange={(event) => set('properties', event.target.value)}
              rows={3}
              placeholder="plan=pro"
            />
          </label>
        </>
      ) : null}
      {draft.type === 'security' ? (
        <Checkboxes
          legend="Security events"
          hint="None checked: every security event."
          options={SECURITY_EVENTS}
          chosen={draft.securityEvents}
          onChange={(value) => set('securityEvents', value)}
        />
      ) : null}
      {draft.type === 'security' ? null : (
        <div className="filters">
          <label>
            Minimum severity
            <select
              value={draft.minSeverity}
              onChange={(event) => set('minSeverity', event.target.value as RuleDraft['minSeverity'])}
            >
              <option value="">Any</option>
              {SEVERITIES.map((severity) => (
                <option key={severity} value={severity}>
                  {severity}
                </option>
              ))}
            </select>
          </label>
          <label>
            Environment (exact, optional)
            <input
              value={draft.environment}
              onChange={(event) => set('environment', event.target.value)}
              maxLength={128}
            />
          </label>
          <label>
            Release (exact, optional)
            <input
              value={draft.release}
              onChange={(event) => set('release', event.target.value)}
              maxLength={128}
            />
          </label>
        </div>
      )}
      {channels.length === 0 ? (
        <p className="hint">No channel yet: this rule’s events reach the inbox only.</p>
      ) : (
        <Checkboxes
          legend="Send to channels"
          options={channels.map((channel) => channel.id)}
          chosen={draft.channelIds}
          onChange={(value) => set('channelIds', value)}
          labelOf={(id) => channels.find((channel) => channel.id === id)?.name ?? id}
        />
      )}
      <label>
        Throttle (minutes; at most one notification per issue and event in this time, 0 for none)
        <input
          type="number"
          min={0}
          max={10080}
          value={draft.throttleMinutes}
          onChange={(event) => set('throttleMinutes', event.target.value)}
          required
        />
      </label>
      {problem === undefined ? null : <ErrorText>{problem}</ErrorText>}
      {save.error ? <ErrorText>{save.error.message}</ErrorText> : null}
      <p className="row-actions">
        <button type="submit" disabled={save.isPending}>
          {rule === undefined ? 'Create rule' : 'Save rule'}
        </button>
        <button type="button" onClick={onDone}>
          Cancel
        </button>
      </p>
    </form>
  );
}
