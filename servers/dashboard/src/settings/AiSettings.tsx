import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useId, useState } from 'react';
import { CodeBlock } from '../ai/CodeBlock.tsx';
import { api } from '../api.ts';
import { CopyButton } from '../ui/copy-button.tsx';
import { AppLink } from '../ui/links.tsx';
import { ErrorText, QueryState } from '../ui/status.tsx';
import { useWorkspace } from '../ui/workspace.tsx';
import { StatusText } from './parts.tsx';
import { administers } from './permissions.ts';
import { ReadOnlyNote, SettingsLayout } from './SettingsLayout.tsx';

// The organization's AI settings (servers/api/README.md, The model): whether the server's model
// answers for the organization, its monthly token cap and the features it may answer; this
// month's use; and how to connect an MCP client. Admins and owners change the settings; everyone
// else reads them.

type Feature = 'summary' | 'explain' | 'search' | 'chat' | 'draft_pr';

/** `GET`/`PATCH /v1/orgs/{orgId}/ai/settings`. */
interface AiSettings {
  organizationId: string;
  enabled: boolean;
  monthlyTokenCap: number | null;
  features: Feature[];
  usedThisMonth: number;
  model: { configured: boolean; name?: string };
}

interface Tokens {
  requests: number;
  inputTokens: number;
  outputTokens: number;
}

/** `GET /v1/ai/usage` (the current project). */
interface AiUsage {
  organizationId: string;
  month: string;
  organization: Tokens & { totalTokens: number };
  project: Tokens;
  byFeature: (Tokens & { feature: string })[];
  cap: number | null;
  remaining: number | null;
}

/** The features, in the API's order, in words. */
const FEATURES: [Feature, string][] = [
  ['summary', 'Session summaries'],
  ['explain', 'Explanations of sessions, calls and issues'],
  ['search', 'Questions in words, in search'],
  ['chat', 'Chat'],
  ['draft_pr', 'Drafts of fixes for errors'],
];

const FEATURE_WORDS: Record<string, string> = Object.fromEntries(FEATURES);

const number = (value: number) => value.toLocaleString();

/** `/settings/ai`. */
export function AiSettingsPage() {
  const { organization } = useWorkspace();
  const settings = useQuery({
    queryKey: ['settings', 'ai', organization.id],
    queryFn: () => api<AiSettings>('GET', `/v1/orgs/${organization.id}/ai/settings`),
  });
  return (
    <SettingsLayout title="AI">
      <p>
        Summaries, explanations, reproductions and search work without a model. A model, when this server has
        one and {organization.name} turns it on, adds its own prose to them, citing the recorded evidence. It
        is sent transcripts (what the SDK masked never reaches one, and e-mail addresses, card numbers and
        secrets are removed first), never recordings.
      </p>
      <QueryState query={settings}>
        {(data) => (
          <>
            <ModelSection settings={data} />
            <SettingsForm settings={data} />
          </>
        )}
      </QueryState>
      <UsageSection />
      <McpSection />
    </SettingsLayout>
  );
}

function ModelSection({ settings }: { settings: AiSettings }) {
  return (
    <section className="settings-section" aria-labelledby="ai-model-title">
      <h2 id="ai-model-title">This server's model</h2>
      {settings.model.configured ? (
        <p data-testid="ai-model">
          <strong>{settings.model.name}</strong>, configured by the server's operator.{' '}
          {settings.enabled
            ? 'It answers for this organization, within the cap below.'
            : 'It does not answer for this organization until AI is turned on below.'}
        </p>
      ) : (
        <p data-testid="ai-model">
          <strong>No model is configured</strong> on this server: every AI feature gives its deterministic
          answer, whatever is chosen below. The server's operator adds one with <code>SVC_AI_BASE_URL</code>{' '}
          and <code>SVC_AI_MODEL</code> (any OpenAI-compatible endpoint).
        </p>
      )}
    </section>
  );
}

/** The form: on or off, the cap, the features. Read-only (one disabled fieldset) for members and viewers. */
function SettingsForm({ settings }: { settings: AiSettings }) {
  const { organization } = useWorkspace();
  const queryClient = useQueryClient();
  const editable = administers(organization.role);
  const [enabled, setEnabled] = useState(settings.enabled);
  const [cap, setCap] = useState(settings.monthlyTokenCap?.toString() ?? '');
  const [features, setFeatures] = useState<Feature[]>(settings.features);
  const [saved, setSaved] = useState<string>();
  const capHint = useId();
  const save = useMutation({
    mutationFn: () =>
      api<AiSettings>('PATCH', `/v1/orgs/${organization.id}/ai/settings`, {
        enabled,
        monthlyTokenCap: cap.trim() === '' ? null : Number(cap),
        features,
      }),
    onMutate: () => setSaved(undefined),
    onSuccess: (updated) => {
      queryClient.setQueryData(['settings', 'ai', organization.id], updated);
      setSaved(`Saved: AI is ${updated.enabled ? 'on' : 'off'} for ${organization.name}.`);
      return queryClient.invalidateQueries({ queryKey: ['settings', 'ai-usage'] });
    },
  });
  function submit(event: FormEvent) {
    event.preventDefault();
    save.mutate();
  }
  return (
    <section className="settings-section" aria-labelledby="ai-settings-title">
      <h2 id="ai-settings-title">For {organization.name}</h2>
      {editable ? null : <ReadOnlyNote what="the organization's AI settings" />}
      <form onSubmit={submit} noValidate className="settings-form" aria-label="AI settings">
        <fieldset disabled={!editable} className="settings-fieldset-plain">
          <label className="settings-check">
            <input type="checkbox" checked={enabled} onChange={(event) => setEnabled(event.target.checked)} />
            Let the model answer for this organization's projects
          </label>
          <div className="settings-grid">
            <label>
              Monthly token cap
              <input
                type="number"
                min={0}
                step={1000}
                inputMode="numeric"
                value={cap}
                placeholder="No cap"
                aria-describedby={capHint}
                onChange={(event) => setCap(event.target.value)}
              />
            </label>
          </div>
          <p className="hint" id={capHint}>
            Input and output tokens per calendar month (UTC), for every project of the organization; empty for
            no cap. Past it, answers are deterministic until the first of the next month.
          </p>
          <fieldset className="settings-scopes">
            <legend>What the model may answer</legend>
            {FEATURES.map(([feature, label]) => (
              <label key={feature} className="settings-check">
                <input
                  type="checkbox"
                  checked={features.includes(feature)}
                  onChange={(event) =>
                    setFeatures((current) =>
                      event.target.checked
                        ? [...current, feature]
                        : current.filter((other) => other !== feature),
                    )
                  }
                />
                {label}
              </label>
            ))}
          </fieldset>
        </fieldset>
        {save.error ? <ErrorText>{save.error.message}</ErrorText> : null}
        {editable ? (
          <div className="settings-actions">
            <button type="submit" className="primary" disabled={save.isPending}>
              Save AI settings
            </button>
            {saved === undefined ? null : <StatusText>{saved}</StatusText>}
          </div>
        ) : null}
      </form>
    </section>
  );
}

/** This month's use of the model: the organization's, against the cap, this project's, per feature. */
function UsageSection() {
  const { project } = useWorkspace();
  const usage = useQuery({
    queryKey: ['settings', 'ai-usage', project.id],
    queryFn: () => api<AiUsage>('GET', '/v1/ai/usage'),
  });
  return (
    <section className="settings-section" aria-labelledby="ai-usage-title">
      <h2 id="ai-usage-title">This month's use</h2>
      <QueryState query={usage}>
        {(data) => (
          <>
            <p data-testid="ai-usage">
              {data.month} (UTC): <strong>{number(data.organization.totalTokens)} tokens</strong> in{' '}
              {data.organization.requests === 1
                ? '1 request'
                : `${number(data.organization.requests)} requests`}{' '}
              for the organization
              {data.cap === null
                ? ', no cap.'
                : `, of a cap of ${number(data.cap)}: ${number(data.remaining ?? 0)} left.`}{' '}
              This project: {number(data.project.inputTokens + data.project.outputTokens)} tokens.
            </p>
            {data.byFeature.length === 0 ? (
              <p className="hint">The model has not answered this month.</p>
            ) : (
              <table>
                <caption className="visually-hidden">Use of the model this month by feature</caption>
                <thead>
                  <tr>
                    <th scope="col">Feature</th>
                    <th scope="col">Requests</th>
                    <th scope="col">Input tokens</th>
                    <th scope="col">Output tokens</th>
                  </tr>
                </thead>
                <tbody>
                  {data.byFeature.map((row) => (
                    <tr key={row.feature}>
                      <th scope="row">{FEATURE_WORDS[row.feature] ?? row.feature}</th>
                      <td>{number(row.requests)}</td>
                      <td>{number(row.inputTokens)}</td>
                      <td>{number(row.outputTokens)}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            )}
          </>
        )}
      </QueryState>
    </section>
  );
}

/** How to connect an MCP client: the URL, the API token it takes, a configuration to copy. */
function McpSection() {
  const { organization } = useWorkspace();
  const url = `${window.location.origin}/mcp`;
  const configuration = JSON.stringify(
    { mcpServers: { svc: { type: 'http', url, headers: { Authorization: 'Bearer svc_…' } } } },
    null,
    2,
  );
  return (
    <section className="settings-section" aria-labelledby="ai-mcp-title">
      <h2 id="ai-mcp-title">Connect an MCP client</h2>
      <p>
        Assistants and editors that speak the Model Context Protocol (Claude, Cursor, VS Code…) can search
        this project's sessions, calls and issues, read transcripts and explanations with read-only tools,
        over Streamable HTTP:
      </p>
      <p className="settings-row">
        <code data-testid="mcp-url">{url}</code>
        <CopyButton text={url} label="Copy the URL" />
      </p>
      <p>
        It takes an API token, sent as <code>Authorization: Bearer svc_…</code>: the token's project and
        scopes apply (<code>sessions:read</code>, <code>calls:read</code>, <code>issues:read</code>).{' '}
        {administers(organization.role)
          ? 'Create one in '
          : `Admins and owners of ${organization.name} create them in `}
        <AppLink to="/settings/tokens">API tokens</AppLink>.
      </p>
      <CodeBlock
        code={configuration}
        caption="A client's configuration (mcp.json)"
        copyLabel="Copy the configuration"
      />
    </section>
  );
}
