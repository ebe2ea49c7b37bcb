import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, type ReactNode, useId, useState } from 'react';
import { useNavigate } from 'react-router';
import { ApiFailure, api } from '../api.ts';
import { formatDateTime } from '../ui/format.ts';
import { ErrorText, QueryState } from '../ui/status.tsx';
import { useWorkspace } from '../ui/workspace.tsx';
import { ConfirmButton, CopyButton, ListEditor, SelectField, StatusText } from './parts.tsx';
import { changesSettings } from './permissions.ts';
import { ReadOnlyNote, SettingsLayout } from './SettingsLayout.tsx';
import { thresholdLabel } from './thresholds.ts';
import type { ProjectDetails, ProjectSettings, SdkConfig } from './types.ts';

/** `GET /v1/projects/{id}`, shared by the form, the key and the deletion. */
function projectQueryKey(id: string) {
  return ['settings', 'project', id];
}

/**
 * Every detector threshold with the project's value (`GET /v1/config`, the SDK's configuration:
 * the defaults with the project's overrides). Asked with `cache: 'no-store'`: the route tells
 * browsers to keep its answer 60 s, for SDKs, and this page must see a change at once.
 */
async function readSdkConfig(projectKey: string): Promise<SdkConfig> {
  const response = await fetch(`/v1/config?key=${encodeURIComponent(projectKey)}&sdk=dashboard`, {
    cache: 'no-store',
    headers: { accept: 'application/json' },
  });
  const body = (await response.json()) as SdkConfig & { error?: string; code?: string };
  if (!response.ok) throw new ApiFailure(response.status, body.code ?? 'internal', body.error ?? 'Failed');
  return body;
}

/** The project's settings: the SDK's remote configuration, allowed origins, key and deletion. */
export function ProjectSettingsPage() {
  const { project } = useWorkspace();
  const details = useQuery({
    queryKey: projectQueryKey(project.id),
    queryFn: () => api<ProjectDetails>('GET', `/v1/projects/${project.id}`),
  });
  const config = useQuery({
    queryKey: ['settings', 'sdk-config', details.data?.projectKey],
    enabled: details.data !== undefined,
    queryFn: () => readSdkConfig(details.data?.projectKey ?? ''),
  });
  const [saved, setSaved] = useState<string | undefined>();
  return (
    <SettingsLayout title="Project settings">
      <QueryState query={details}>
        {(data) => (
          <>
            <ProjectKey project={data} />
            <QueryState query={config}>
              {(sdk) => <SettingsForm project={data} defaults={sdk} onSaved={setSaved} />}
            </QueryState>
            {saved === undefined ? null : <StatusText>{saved}</StatusText>}
            <DeleteProject project={data} />
          </>
        )}
      </QueryState>
    </SettingsLayout>
  );
}

/** A draft of the settings as the form holds them: numbers as typed. */
interface Draft {
  name: string;
  settings: ProjectSettings;
  /** Threshold overrides as typed; a name not here follows the default. */
  thresholds: Record<string, string>;
  sampleIntervalSec: string;
  maxPeerConnections: string;
  monitorModeAfterMinutes: string;
  maxChunksPerSecond: string;
  inactivityTimeoutSec: string;
  /** Route patterns as typed: one a line. */
  routePatterns: string;
}

function draftOf(project: ProjectDetails): Draft {
  const { settings } = project;
  return {
    name: project.name,
    settings,
    thresholds: Object.fromEntries(
      Object.entries(settings.detectorThresholds).map(([name, value]) => [name, String(value)]),
    ),
    sampleIntervalSec: String(settings.webrtc.sampleIntervalSec),
    maxPeerConnections: String(settings.webrtc.maxPeerConnections),
    monitorModeAfterMinutes: settings.recording.monitorModeAfterMinutes?.toString() ?? '',
    maxChunksPerSecond: settings.ingest.maxChunksPerSecond?.toString() ?? '',
    inactivityTimeoutSec: String(settings.calls.inactivityTimeoutSec),
    routePatterns: settings.insights.routePatterns.join('\n'),
  };
}

/** The route patterns of the textarea: one a line, blank lines left out. */
function patternsOf(text: string): string[] {
  return text
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '');
}

/** A typed number as sent: empty is `null` (where the API takes it), anything else a number. */
function numberOf(text: string): number | null {
  return text.trim() === '' ? null : Number(text);
}

function patchOf(draft: Draft) {
  const { settings } = draft;
  return {
    name: draft.name,
    settings: {
      webrtc: {
        ...settings.webrtc,
        sampleIntervalSec: numberOf(draft.sampleIntervalSec),
        maxPeerConnections: numberOf(draft.maxPeerConnections),
      },
      recording: { ...settings.recording, monitorModeAfterMinutes: numberOf(draft.monitorModeAfterMinutes) },
      privacy: settings.privacy,
      detectorThresholds: Object.fromEntries(
        Object.entries(draft.thresholds)
          .filter(([, value]) => value.trim() !== '')
          .map(([name, value]) => [name, Number(value)]),
      ),
      allowedOrigins: settings.allowedOrigins,
      ingest: { maxChunksPerSecond: numberOf(draft.maxChunksPerSecond) },
      calls: { inactivityTimeoutSec: numberOf(draft.inactivityTimeoutSec) },
      insights: { routePatterns: patternsOf(draft.routePatterns) },
      assets: settings.assets,
    },
  };
}

/**
 * What the API's 400 says of the route patterns: its issues are `<path>: <message>` joined by
 * `; `, a pattern's path ending in its index among those sent (`/settings/insights/routePatterns/1`).
 */
function routePatternProblems(
  error: string,
  patterns: readonly string[],
): Array<{ pattern?: string | undefined; message: string }> {
  return [...error.matchAll(/\/settings\/insights\/routePatterns(?:\/(\d+))?: ([^;]*)/g)].map((match) => ({
    pattern: match[1] === undefined ? undefined : patterns[Number(match[1])],
    message: match[2] ?? '',
  }));
}

function SettingsForm({
  project,
  defaults,
  onSaved,
}: {
  project: ProjectDetails;
  defaults: SdkConfig;
  onSaved: (message: string | undefined) => void;
}) {
  const { organization } = useWorkspace();
  const queryClient = useQueryClient();
  const editable = changesSettings(organization.role);
  const [draft, setDraft] = useState(() => draftOf(project));
  const errorId = useId();
  const routePatternsHintId = useId();
  const routePatternsErrorId = useId();
  const save = useMutation({
    mutationFn: (patch: ReturnType<typeof patchOf>) =>
      api<ProjectDetails>('PATCH', `/v1/projects/${project.id}`, patch),
    onMutate: () => onSaved(undefined),
    onSuccess: async (updated) => {
      // The form goes on from what the server stored (a key rotation meanwhile keeps the edits).
      setDraft(draftOf(updated));
      onSaved(`Saved at ${new Date(updated.updatedAt).toLocaleTimeString()}`);
      queryClient.setQueryData(projectQueryKey(project.id), updated);
      await Promise.all([
        queryClient.invalidateQueries({ queryKey: ['settings', 'sdk-config'] }),
        queryClient.invalidateQueries({ queryKey: ['projects', organization.id] }),
      ]);
    },
  });
  const error = save.error?.message;
  /** Whether the API's error names this field (its message gives the path: `/settings/…/lossPct`). */
  const names = (field: string) => error !== undefined && new RegExp(`/${field}\\b`).test(error);
  const invalid = (field: string) =>
    names(field) ? { 'aria-invalid': true as const, 'aria-describedby': errorId } : {};
  // Read against the patterns sent, not those typed since.
  const patternProblems =
    error === undefined
      ? []
      : routePatternProblems(error, save.variables?.settings.insights.routePatterns ?? []);
  const patternsInvalid = patternProblems.length > 0;

  function set<Group extends keyof ProjectSettings>(group: Group, value: Partial<ProjectSettings[Group]>) {
    setDraft((current) => ({
      ...current,
      settings: { ...current.settings, [group]: { ...current.settings[group], ...value } },
    }));
  }
  function setText(field: Exclude<keyof Draft, 'settings' | 'thresholds'>, value: string) {
    setDraft((current) => ({ ...current, [field]: value }));
  }
  function submit(event: FormEvent) {
    event.preventDefault();
    save.mutate(patchOf(draft));
  }

  const { settings } = draft;
  const stored = project.settings.detectorThresholds;
  return (
    <form onSubmit={submit} noValidate className="settings-form" aria-label="Project settings">
      {editable ? null : <ReadOnlyNote what="this project's settings" />}
      <fieldset disabled={!editable} className="settings-fieldset-plain">
        <Section title="Project">
          <label>
            Project name
            <input
              value={draft.name}
              onChange={(event) => setText('name', event.target.value)}
              {...invalid('name')}
            />
          </label>
        </Section>

        <Section title="WebRTC call quality">
          <label className="settings-check">
            <input
              type="checkbox"
              checked={settings.webrtc.enabled}
              onChange={(event) => set('webrtc', { enabled: event.target.checked })}
            />
            Collect WebRTC call statistics (loads the SDK's WebRTC collector)
          </label>
          <div className="settings-grid">
            <label>
              Sample interval (seconds)
              <input
                type="number"
                value={draft.sampleIntervalSec}
                onChange={(event) => setText('sampleIntervalSec', event.target.value)}
                {...invalid('sampleIntervalSec')}
              />
            </label>
            <label>
              Peer connections tracked at most
              <input
                type="number"
                value={draft.maxPeerConnections}
                onChange={(event) => setText('maxPeerConnections', event.target.value)}
                {...invalid('maxPeerConnections')}
              />
            </label>
            <label>
              Close a silent call after (seconds)
              <input
                type="number"
                value={draft.inactivityTimeoutSec}
                onChange={(event) => setText('inactivityTimeoutSec', event.target.value)}
                {...invalid('inactivityTimeoutSec')}
              />
            </label>
          </div>
          <label className="settings-check">
            <input
              type="checkbox"
              checked={settings.webrtc.captureSdp}
              onChange={(event) => set('webrtc', { captureSdp: event.target.checked })}
            />
            Capture SDP (never in strict mode)
          </label>
          <label className="settings-check">
            <input
              type="checkbox"
              checked={settings.webrtc.emitOnThresholdCross}
              onChange={(event) => set('webrtc', { emitOnThresholdCross: event.target.checked })}
            />
            Send a sample as soon as a threshold is crossed
          </label>
        </Section>

        <Section title="Recording">
          <div className="settings-grid">
            <SelectField
              label="Recording mode"
              value={settings.recording.mode}
              onChange={(mode) => set('recording', { mode: mode as ProjectSettings['recording']['mode'] })}
            >
              <option value="always">Always: keep every session</option>
              <option value="conditional">Conditional: keep a session when a trigger fires</option>
            </SelectField>
            <label>
              Monitor mode after (minutes)
              <input
                type="number"
                placeholder="never"
                value={draft.monitorModeAfterMinutes}
                onChange={(event) => setText('monitorModeAfterMinutes', event.target.value)}
                {...invalid('monitorModeAfterMinutes')}
              />
            </label>
          </div>
          <h3 className="settings-subheading">Triggers</h3>
          <ListEditor
            label="Triggers"
            items={settings.recording.triggers}
            onChange={(triggers) => set('recording', { triggers })}
            disabled={!editable}
            placeholder="error, webrtc:packet_loss, a track() name"
            empty="No triggers."
          />
          <h3 className="settings-subheading">Monitor-mode triggers</h3>
          <ListEditor
            label="Monitor-mode triggers"
            items={settings.recording.monitorTriggers}
            onChange={(monitorTriggers) => set('recording', { monitorTriggers })}
            disabled={!editable}
            empty="No monitor-mode triggers."
          />
        </Section>

        <Section title="Privacy">
          <SelectField
            label="Privacy mode"
            value={settings.privacy.mode}
            onChange={(mode) => set('privacy', { mode: mode as ProjectSettings['privacy']['mode'] })}
          >
            <option value="standard">Standard: mask text and inputs, except unmasked elements</option>
            <option value="strict">Strict: mask everything, trim URLs, never capture SDP</option>
          </SelectField>
        </Section>

        <Section title="Detector thresholds">
          <p>
            When a call counts as having a problem. Every threshold is listed with the value SDKs get now;
            change one to override its default, or reset it.
          </p>
          <table className="settings-thresholds">
            <thead>
              <tr>
                <th scope="col">Threshold</th>
                <th scope="col">Value</th>
                <th scope="col">Default</th>
                <th scope="col">Override</th>
              </tr>
            </thead>
            <tbody>
              {Object.entries(defaults.detectorThresholds).map(([name, effective]) => {
                const overridden = draft.thresholds[name] !== undefined;
                // The config's value is the default unless the saved settings override it.
                const known = stored[name] === undefined ? effective : undefined;
                const inputId = `threshold-${name}`;
                return (
                  <tr key={name}>
                    <th scope="row">
                      <label htmlFor={inputId}>{thresholdLabel(name)}</label> <code>{name}</code>
                    </th>
                    <td>
                      <input
                        id={inputId}
                        type="number"
                        step="any"
                        value={draft.thresholds[name] ?? known?.toString() ?? ''}
                        placeholder="default"
                        onChange={(event) => {
                          const value = event.target.value;
                          setDraft((current) => ({
                            ...current,
                            thresholds: { ...current.thresholds, [name]: value },
                          }));
                        }}
                        {...invalid(name)}
                      />
                    </td>
                    <td>{known ?? '—'}</td>
                    <td>
                      {overridden ? (
                        editable ? (
                          <button
                            type="button"
                            onClick={() =>
                              setDraft((current) => {
                                const { [name]: _reset, ...rest } = current.thresholds;
                                return { ...current, thresholds: rest };
                              })
                            }
                          >
                            Reset <span className="visually-hidden">{thresholdLabel(name)}</span>
                          </button>
                        ) : (
                          'Changed'
                        )
                      ) : (
                        'Default'
                      )}
                    </td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        </Section>

        <Section title="Allowed origins">
          <p>
            Browser origins that may send data with this project's key, such as{' '}
            <code>https://app.example.com</code>. With none, any origin may: project keys are public.
          </p>
          <ListEditor
            label="Allowed origins"
            items={settings.allowedOrigins}
            onChange={(allowedOrigins) =>
              setDraft((current) => ({ ...current, settings: { ...current.settings, allowedOrigins } }))
            }
            disabled={!editable}
            placeholder="https://app.example.com"
            empty="Any origin may send data."
          />
        </Section>

        <Section title="Archived assets">
          <p>
            Stylesheets of recorded pages are archived from the allowed origins above, so replays keep their
            look after the site changes. With none listed, nothing is archived.
          </p>
          <label className="settings-check">
            <input
              type="checkbox"
              checked={settings.assets.archiveFonts}
              onChange={(event) => set('assets', { archiveFonts: event.target.checked })}
            />
            Also archive fonts
          </label>
          <label className="settings-check">
            <input
              type="checkbox"
              checked={settings.assets.archiveImages}
              onChange={(event) => set('assets', { archiveImages: event.target.checked })}
            />
            Also archive images
          </label>
        </Section>

        <Section title="Insights">
          <label>
            Route patterns
            <textarea
              className="settings-patterns"
              rows={4}
              value={draft.routePatterns}
              placeholder={'/docs/:slug\n/u/:id/settings'}
              spellCheck={false}
              onChange={(event) => setText('routePatterns', event.target.value)}
              aria-describedby={
                patternsInvalid ? `${routePatternsErrorId} ${routePatternsHintId}` : routePatternsHintId
              }
              {...(patternsInvalid ? { 'aria-invalid': true as const } : {})}
            />
          </label>
          <p className="hint" id={routePatternsHintId}>
            One pattern per line, such as <code>/docs/:slug</code>: how page views are named for web vitals,
            heatmaps and funnels. A <code>:name</code> segment matches any one segment; the first pattern that
            matches a page's path is its route, else id-like segments become <code>:id</code>.
          </p>
          {patternProblems.length === 0 ? null : (
            <ul className="error" id={routePatternsErrorId} data-field-error="routePatterns">
              {patternProblems.map((problem) => (
                <li key={`${problem.pattern} ${problem.message}`}>
                  {problem.pattern === undefined ? null : (
                    <>
                      <code>{problem.pattern}</code>:{' '}
                    </>
                  )}
                  {problem.message}
                </li>
              ))}
            </ul>
          )}
        </Section>

        <Section title="Ingest">
          <label>
            Chunks per second per server process
            <input
              type="number"
              placeholder="no limit"
              value={draft.maxChunksPerSecond}
              onChange={(event) => setText('maxChunksPerSecond', event.target.value)}
              {...invalid('maxChunksPerSecond')}
            />
          </label>
        </Section>
      </fieldset>
      {editable ? (
        <div className="settings-actions">
          {error === undefined ? null : (
            <p className="error" role="alert" id={errorId}>
              {error}
            </p>
          )}
          <button type="submit" className="primary" disabled={save.isPending}>
            Save settings
          </button>
        </div>
      ) : null}
    </form>
  );
}

function Section({ title, children }: { title: string; children: ReactNode }) {
  const id = useId();
  return (
    <section className="settings-section" aria-labelledby={id}>
      <h2 id={id}>{title}</h2>
      {children}
    </section>
  );
}

/** The project key (public: it goes into the SDK's init call), with copy and rotation. */
function ProjectKey({ project }: { project: ProjectDetails }) {
  const { organization } = useWorkspace();
  const queryClient = useQueryClient();
  const rotate = useMutation({
    mutationFn: () => api<ProjectDetails>('POST', `/v1/projects/${project.id}/rotate-key`),
    onSuccess: (rotated) => {
      queryClient.setQueryData(projectQueryKey(project.id), rotated);
      return queryClient.invalidateQueries({ queryKey: ['projects', organization.id] });
    },
  });
  const previous = project.previousProjectKey;
  return (
    <section className="settings-section" aria-labelledby="project-key-title">
      <h2 id="project-key-title">Project key</h2>
      <p>
        The key the browser SDK is initialized with. It only lets pages send data, so it may appear in your
        pages' source.
      </p>
      <p className="settings-row">
        <code data-testid="project-key">{project.projectKey}</code>
        <CopyButton text={project.projectKey} label="Copy key" />
      </p>
      {previous === undefined ? null : (
        <p>
          The previous key <code>{previous.key}</code> keeps working until{' '}
          <time dateTime={previous.expiresAt}>{formatDateTime(previous.expiresAt)}</time> (
          {hoursLeft(previous.expiresAt)}), so pages already deployed keep recording.
        </p>
      )}
      {changesSettings(organization.role) ? (
        <ConfirmButton
          label="Rotate key"
          confirmLabel="Yes, rotate the key"
          question="A new key: the current one keeps working for 24 hours, then stops."
          pending={rotate.isPending}
          onConfirm={() => rotate.mutate()}
        />
      ) : null}
      {rotate.error ? <ErrorText>{rotate.error.message}</ErrorText> : null}
      {rotate.isSuccess ? <StatusText>A new key is in place.</StatusText> : null}
    </section>
  );
}

function hoursLeft(iso: string): string {
  const hours = Math.max(0, (new Date(iso).getTime() - Date.now()) / 3_600_000);
  return hours >= 1 ? `${Math.floor(hours)} h left` : `${Math.ceil(hours * 60)} min left`;
}

/** Deleting the project, for admins and owners: its name typed again first. */
function DeleteProject({ project }: { project: ProjectDetails }) {
  const { organization } = useWorkspace();
  const queryClient = useQueryClient();
  const navigate = useNavigate();
  const [typed, setTyped] = useState('');
  const remove = useMutation({
    mutationFn: () => api<void>('DELETE', `/v1/projects/${project.id}`),
    onSuccess: async () => {
      await queryClient.invalidateQueries({ queryKey: ['projects', organization.id] });
      navigate(`/settings/project?org=${encodeURIComponent(organization.id)}`);
    },
  });
  if (!changesSettings(organization.role)) return null;
  return (
    <section className="settings-section settings-danger" aria-labelledby="delete-project-title">
      <h2 id="delete-project-title">Delete this project</h2>
      <p>
        At once its key stops accepting data, its API tokens stop working and it leaves every list. This
        cannot be undone.
      </p>
      <form
        className="settings-row"
        onSubmit={(event) => {
          event.preventDefault();
          if (typed === project.name) remove.mutate();
        }}
      >
        <label>
          Type the project's name, {project.name}, to confirm
          <input value={typed} onChange={(event) => setTyped(event.target.value)} autoComplete="off" />
        </label>
        <button type="submit" className="danger" disabled={typed !== project.name || remove.isPending}>
          Delete project
        </button>
      </form>
      {remove.error ? <ErrorText>{remove.error.message}</ErrorText> : null}
    </section>
  );
}
