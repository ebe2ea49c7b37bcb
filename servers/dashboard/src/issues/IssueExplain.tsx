import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { Causes } from '../ai/Causes.tsx';
import { CodeBlock } from '../ai/CodeBlock.tsx';
import { type EvidencePlace, evidencePlaces, useTranscript } from '../ai/evidence.ts';
import { evidenceText, formatShare } from '../ai/labels.ts';
import { type Cite, ModelNoteView } from '../ai/ModelNote.tsx';
import type { Dimension, DimensionValue, DraftFix, IssueExplanation } from '../ai/types.ts';
import { api } from '../api.ts';
import { formatClock, formatDateTime } from '../ui/format.ts';
import { AppLink } from '../ui/links.tsx';
import { QueryState } from '../ui/status.tsx';
import { useWorkspace } from '../ui/workspace.tsx';
import { SourceContext } from './StackTrace.tsx';
import type { Issue } from './types.ts';

// The issue page's AI panels (servers/api/README.md, Explanations): the explanation of the issue
// over its occurrences (where it concentrates against the project's sessions, likely causes, the
// sessions it happened in, the model's prose) and, for errors, a draft of a fix (where it would go
// and, with a model, a unified diff that is never applied). Both are asked for on a click: with AI
// on, the model answers, which uses the organization's tokens.

const DIMENSION_WORDS: Record<Dimension, string> = {
  release: 'Release',
  browser: 'Browser',
  os: 'Operating system',
  device: 'Device',
  environment: 'Environment',
  network: 'Network',
};

/** A share as a bar and a number: the bar's width is the share (the number says it in words). */
function Share({ share, baseline = false }: { share: number; baseline?: boolean }) {
  return (
    <>
      <span
        className={baseline ? 'ai-share-bar baseline' : 'ai-share-bar'}
        style={{ width: `${Math.max(1, Math.round(share * 80))}px` }}
        aria-hidden="true"
      />
      {formatShare(share)}
    </>
  );
}

/** The rows of the shares table: a value's occurrences, its share and the sessions' share. */
function ShareRows({ rows }: { rows: (DimensionValue & { dimension: Dimension })[] }) {
  return (
    <>
      {rows.map((row) => (
        <tr key={`${row.dimension}:${row.value}`}>
          <th scope="row">{DIMENSION_WORDS[row.dimension]}</th>
          <td>
            <code>{row.value}</code>
          </td>
          <td>{row.occurrences}</td>
          <td>
            <Share share={row.share} />
          </td>
          <td>
            <Share share={row.baselineShare} baseline />
          </td>
          <td>{row.lift === null ? '—' : `${row.lift}×`}</td>
        </tr>
      ))}
    </>
  );
}

function SharesTable({
  caption,
  rows,
}: {
  caption: string;
  rows: (DimensionValue & { dimension: Dimension })[];
}) {
  return (
    <table className="ai-shares">
      <caption className="visually-hidden">{caption}</caption>
      <thead>
        <tr>
          <th scope="col">Dimension</th>
          <th scope="col">Value</th>
          <th scope="col">Occurrences</th>
          <th scope="col">Share of occurrences</th>
          <th scope="col">Share of sessions</th>
          <th scope="col">Lift</th>
        </tr>
      </thead>
      <tbody>
        <ShareRows rows={rows} />
      </tbody>
    </table>
  );
}

/** A link opening the latest occurrence's replay where an evidence id's entry happened. */
function replayCite(sessionId: string | undefined, places: Map<string, EvidencePlace>): Cite {
  return (evidenceId) => {
    const place = places.get(evidenceId);
    if (sessionId === undefined || place === undefined) return <code>{evidenceId}</code>;
    return (
      <AppLink
        to={`/sessions/${sessionId}?t=${Math.round(place.offsetMs)}`}
        aria-label={`Replay from ${formatClock(place.offsetMs)}, evidence ${evidenceId}`}
      >
        {evidenceId}
      </AppLink>
    );
  };
}

/** "Explain this issue", then its explanation. */
export function IssueExplain({ issue }: { issue: Issue }) {
  const { project } = useWorkspace();
  const [asked, setAsked] = useState(false);
  const explanation = useQuery({
    queryKey: ['issue-explain', project.id, issue.id],
    enabled: asked,
    staleTime: Number.POSITIVE_INFINITY,
    queryFn: () => api<IssueExplanation>('POST', `/v1/issues/${issue.id}/explain`),
  });
  // The model cites the latest occurrence's transcript: its entries say where each one happened.
  const latest = explanation.data?.explanation.latest;
  const note = explanation.data?.ai;
  const transcript = useTranscript(
    latest?.sessionId,
    latest !== undefined && note?.used === true && note.evidenceIds.length > 0,
  );
  return (
    <section aria-labelledby="issue-explain-title" className="ai-panel issue-explain">
      <h2 id="issue-explain-title">Explanation</h2>
      {!asked ? (
        <div className="ai-actions">
          <p className="hint">
            Where this issue concentrates (releases, browsers, devices…) against the project's sessions, its
            likely causes and what to try. When your organization has turned AI on, a model adds its own
            explanation (it uses the organization's tokens).
          </p>
          <button type="button" className="primary" onClick={() => setAsked(true)}>
            Explain this issue
          </button>
        </div>
      ) : (
        <QueryState query={explanation}>
          {(data) => (
            <IssueExplanationView
              issueId={issue.id}
              data={data}
              cite={replayCite(latest?.sessionId, evidencePlaces(undefined, transcript.data))}
            />
          )}
        </QueryState>
      )}
    </section>
  );
}

function IssueExplanationView({
  issueId,
  data,
  cite,
}: {
  issueId: string;
  data: IssueExplanation;
  cite: Cite;
}) {
  const { explanation } = data;
  const breakdown = (Object.keys(DIMENSION_WORDS) as Dimension[]).flatMap((dimension) =>
    (explanation.breakdown[dimension] ?? []).map((row) => ({ ...row, dimension })),
  );
  return (
    <>
      <p className="ai-summary">{explanation.summary}</p>
      <p className="hint">
        {explanation.occurrences === 1 ? '1 occurrence' : `${explanation.occurrences} occurrences`} in{' '}
        {explanation.sessions === 1 ? '1 session' : `${explanation.sessions} sessions`}, from{' '}
        {formatDateTime(explanation.window.from)} to {formatDateTime(explanation.window.to)}.
      </p>
      <ModelNoteView
        note={data.ai}
        feature="explain"
        subjectId={issueId}
        label="The model's explanation"
        cite={cite}
      />
      <h3>Where it concentrates</h3>
      {explanation.concentrations.length === 0 ? (
        <p>
          Nowhere in particular: no release, browser, operating system, device, environment or network holds
          at least half of its occurrences well above its share of the project's sessions (it takes 3
          occurrences or more).
        </p>
      ) : (
        <SharesTable caption="Where the issue concentrates" rows={explanation.concentrations} />
      )}
      {breakdown.length === 0 ? null : (
        <details className="ai-breakdown">
          <summary>Every value, against the project's sessions</summary>
          <SharesTable caption="The issue's occurrences by dimension" rows={breakdown} />
        </details>
      )}
      <h3>Likely causes</h3>
      <Causes causes={explanation.causes} label="Likely causes of the issue" />
      {explanation.latest === undefined ? null : (
        <>
          <p className="hint">
            Read on the latest occurrence, in{' '}
            <AppLink to={`/sessions/${explanation.latest.sessionId}`}>
              session <code>{explanation.latest.sessionId}</code>
            </AppLink>{' '}
            (evidence <code>{explanation.latest.evidenceId}</code>):
          </p>
          <dl className="ai-evidence">
            {Object.entries(explanation.latest.evidence).map(([name, value]) => (
              <div key={name} className="ai-evidence-pair">
                <dt>{name}</dt>
                <dd>{evidenceText(value)}</dd>
              </div>
            ))}
          </dl>
        </>
      )}
      <h3>Example sessions</h3>
      {explanation.exampleSessions.length === 0 ? (
        <p>No session is left.</p>
      ) : (
        <ul aria-label="Example sessions">
          {explanation.exampleSessions.map((sessionId) => (
            <li key={sessionId}>
              <AppLink to={`/sessions/${sessionId}`}>
                <code>{sessionId}</code>
              </AppLink>
            </li>
          ))}
        </ul>
      )}
    </>
  );
}

/**
 * "Draft a fix" (error issues): where the latest error was thrown, from the uploaded source maps,
 * and with a model a unified diff to read and copy, never applied; else why there is none.
 */
export function DraftFixPanel({ issue }: { issue: Issue }) {
  const { project } = useWorkspace();
  const [asked, setAsked] = useState(false);
  const draft = useQuery({
    queryKey: ['issue-draft', project.id, issue.id],
    enabled: asked,
    staleTime: Number.POSITIVE_INFINITY,
    queryFn: () => api<DraftFix>('POST', `/v1/issues/${issue.id}/draft-pr`),
  });
  return (
    <section aria-labelledby="issue-draft-title" className="ai-panel issue-draft">
      <h2 id="issue-draft-title">Draft a fix</h2>
      {!asked ? (
        <div className="ai-actions">
          <p className="hint">
            Where the latest error was thrown, in the original source (from the uploaded source maps), and
            with a model a proposed patch. Nothing is applied: you read it and open the pull request.
          </p>
          <button type="button" className="primary" onClick={() => setAsked(true)}>
            Draft a fix
          </button>
        </div>
      ) : (
        <QueryState query={draft}>{(data) => <DraftView issueId={issue.id} data={data} />}</QueryState>
      )}
    </section>
  );
}

/** The model's answer without its fenced code: the diff is shown above, in its own block. */
function withoutCode(text: string): string {
  return text.replace(/```[\s\S]*?(?:```|$)/g, '').trim();
}

function DraftView({ issueId, data }: { issueId: string; data: DraftFix }) {
  const { location, error } = data;
  return (
    <>
      {error === undefined ? null : (
        <p>
          <strong>
            {error.name}
            {error.message === undefined ? '' : `: ${error.message}`}
          </strong>{' '}
          in{' '}
          <AppLink to={`/sessions/${error.sessionId}`}>
            session <code>{error.sessionId}</code>
          </AppLink>
        </p>
      )}
      {location?.file === undefined || location.line === undefined ? null : (
        <>
          <h3>Where a fix would go</h3>
          <p>
            <code>{location.function ?? '(anonymous)'}</code> at{' '}
            <code className="ai-location">
              {location.file}:{location.line}
              {location.column === undefined ? '' : `:${location.column}`}
            </code>
          </p>
          <SourceContext frame={{ file: location.file, line: location.line, context: location.context }} />
        </>
      )}
      {data.diff === null ? (
        data.reason === undefined ? null : (
          <p className="ai-draft-reason">{data.reason}</p>
        )
      ) : (
        <>
          <h3>Proposed patch</h3>
          <p className="hint">A model's proposal, never applied: review it before you open a pull request.</p>
          <CodeBlock code={data.diff} caption="Unified diff" copyLabel="Copy the diff" diff />
        </>
      )}
      {/* Without a model the reason is the draft's own, said above. */}
      {!data.ai.used && data.ai.reason === data.reason ? null : (
        <ModelNoteView
          note={
            data.diff === null || !data.ai.used ? data.ai : { ...data.ai, text: withoutCode(data.ai.text) }
          }
          feature="draft_pr"
          subjectId={issueId}
          label="The model's note on the fix"
          cite={(id) => <code>{id}</code>}
        />
      )}
    </>
  );
}
