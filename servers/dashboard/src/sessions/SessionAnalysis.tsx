import { useQuery } from '@tanstack/react-query';
import { type KeyboardEvent, memo, useId, useRef, useState } from 'react';
import { Causes } from '../ai/Causes.tsx';
import { CodeBlock } from '../ai/CodeBlock.tsx';
import { type EvidencePlace, evidencePlaces, useTranscript } from '../ai/evidence.ts';
import { evidenceText, severityLabel } from '../ai/labels.ts';
import { type Cite, ModelNoteView, withCitations } from '../ai/ModelNote.tsx';
import type { Problem, Reproduction, SessionExplanation, SessionSummary } from '../ai/types.ts';
import { api } from '../api.ts';
import { CopyButton } from '../ui/copy-button.tsx';
import { formatClock } from '../ui/format.ts';
import { QueryState } from '../ui/status.tsx';
import { useWorkspace } from '../ui/workspace.tsx';

// The session page's analysis, under the player (servers/api/README.md, Transcripts, explanations
// and reproductions): Explain (the summary and the problems with their evidence and causes, and
// the model's prose when one answers), Transcript (the entries; a click seeks) and Reproduce (the
// steps and a Playwright script). The answers are kept for the page's life (`staleTime`), so
// switching tabs asks nothing again, and the model is not asked twice.

type Tab = 'explain' | 'transcript' | 'reproduce';
const TABS: [Tab, string][] = [
  ['explain', 'Explain'],
  ['transcript', 'Transcript'],
  ['reproduce', 'Reproduce'],
];

export interface SessionAnalysisProps {
  sessionId: string;
  /** Moves the replay to `offset` ms from the session's start. */
  seek(offset: number): void;
}

/**
 * The analysis tabs. Memoized on the session and `seek` (stable), so playback, which moves the
 * player's offset ten times a second, does not render them again.
 */
export const SessionAnalysis = memo(function SessionAnalysis({ sessionId, seek }: SessionAnalysisProps) {
  const [tab, setTab] = useState<Tab>('explain');
  // Each tab's content is made when first opened, then kept (hidden) while another is shown.
  const [opened, setOpened] = useState<ReadonlySet<Tab>>(new Set(['explain']));
  const [explainAsked, setExplainAsked] = useState(false);
  const id = useId();
  const tabs = useRef<Partial<Record<Tab, HTMLButtonElement | null>>>({});

  function select(next: Tab, focus = false) {
    setTab(next);
    setOpened((current) => (current.has(next) ? current : new Set([...current, next])));
    if (focus) tabs.current[next]?.focus();
  }
  // The WAI-ARIA tabs pattern: ← → move between tabs (and show them), Home and End go to the ends.
  function onKeyDown(event: KeyboardEvent<HTMLButtonElement>, index: number) {
    const last = TABS.length - 1;
    const target =
      event.key === 'ArrowRight'
        ? index === last
          ? 0
          : index + 1
        : event.key === 'ArrowLeft'
          ? index === 0
            ? last
            : index - 1
          : event.key === 'Home'
            ? 0
            : event.key === 'End'
              ? last
              : undefined;
    if (target === undefined) return;
    event.preventDefault();
    select((TABS[target] as [Tab, string])[0], true);
  }

  return (
    <section className="ai-panel session-analysis" aria-labelledby={`${id}-title`}>
      <h2 id={`${id}-title`}>Analysis</h2>
      <div role="tablist" aria-label="Analysis of the session" className="ai-tabs">
        {TABS.map(([name, label], index) => (
          <button
            key={name}
            ref={(element) => {
              tabs.current[name] = element;
            }}
            type="button"
            role="tab"
            id={`${id}-tab-${name}`}
            aria-selected={tab === name}
            aria-controls={`${id}-panel-${name}`}
            tabIndex={tab === name ? 0 : -1}
            onClick={() => select(name)}
            onKeyDown={(event) => onKeyDown(event, index)}
          >
            {label}
          </button>
        ))}
      </div>
      {TABS.map(([name]) => (
        <div
          key={name}
          role="tabpanel"
          id={`${id}-panel-${name}`}
          aria-labelledby={`${id}-tab-${name}`}
          className="ai-tabpanel"
          hidden={tab !== name}
          // biome-ignore lint/a11y/noNoninteractiveTabindex: the tabs pattern puts the panel in the tab order
          tabIndex={0}
        >
          {!opened.has(name) ? null : name === 'explain' ? (
            <ExplainTab
              sessionId={sessionId}
              seek={seek}
              asked={explainAsked}
              onAsk={() => setExplainAsked(true)}
            />
          ) : name === 'transcript' ? (
            <TranscriptTab sessionId={sessionId} seek={seek} />
          ) : (
            <ReproduceTab sessionId={sessionId} />
          )}
        </div>
      ))}
    </section>
  );
});

/** A button that seeks the replay to an evidence id's place (plain text while its place is unknown). */
function seekCite(places: Map<string, EvidencePlace>, seek: (offset: number) => void): Cite {
  return (evidenceId) => {
    const place = places.get(evidenceId);
    if (place === undefined) return <code>{evidenceId}</code>;
    return (
      <button
        type="button"
        className="ai-evidence-link"
        aria-label={`Play from ${formatClock(place.offsetMs)}, evidence ${evidenceId}`}
        title={`${formatClock(place.offsetMs)} ${place.text}`}
        onClick={() => seek(place.offsetMs)}
      >
        {evidenceId}
      </button>
    );
  };
}

/**
 * Explain: asked for on a click (reading a long session takes the server a moment, and with AI on
 * the model answers, which uses the organization's tokens), then the summary, the problems and
 * the model's prose.
 */
function ExplainTab({
  sessionId,
  seek,
  asked,
  onAsk,
}: SessionAnalysisProps & { asked: boolean; onAsk(): void }) {
  const { project } = useWorkspace();
  const path = `/v1/sessions/${encodeURIComponent(sessionId)}`;
  const summary = useQuery({
    queryKey: ['session-summary', project.id, sessionId],
    enabled: asked,
    staleTime: Number.POSITIVE_INFINITY,
    queryFn: () => api<SessionSummary>('GET', `${path}/summary`),
  });
  const explanation = useQuery({
    queryKey: ['session-explain', project.id, sessionId],
    enabled: asked,
    staleTime: Number.POSITIVE_INFINITY,
    queryFn: () => api<SessionExplanation>('POST', `${path}/explain`),
  });
  // The model's citations seek to their entries: the transcript says where each one is.
  const cites = [summary.data?.ai, explanation.data?.ai].some(
    (note) => note?.used === true && note.evidenceIds.length > 0,
  );
  const transcript = useTranscript(sessionId, cites);
  const places = evidencePlaces(explanation.data?.explanation.problems, transcript.data);
  const cite = seekCite(places, seek);

  if (!asked)
    return (
      <div className="ai-actions">
        <p className="hint">
          What happened, what went wrong and why: the session's problems with their evidence and likely
          causes, from its transcript. When your organization has turned AI on, a model adds its own
          explanation (it uses the organization's tokens).
        </p>
        <button type="button" className="primary" onClick={onAsk}>
          Explain this session
        </button>
      </div>
    );
  return (
    <>
      <h3>Summary</h3>
      <QueryState query={summary}>
        {(data) => (
          <>
            <p className="ai-summary">{withCitations(data.summary, new Set(places.keys()), cite)}</p>
            <ModelNoteView
              note={data.ai}
              feature="summary"
              subjectId={sessionId}
              label="The model's summary"
              cite={cite}
            />
          </>
        )}
      </QueryState>
      <QueryState query={explanation}>
        {(data) => (
          <>
            <h3>
              {data.explanation.problems.length === 0
                ? 'No problems'
                : `Problems (${data.explanation.problems.length}), most severe first`}
            </h3>
            {data.explanation.problems.length === 0 ? (
              <p>No error, failed request, frustrated click, poor vital or call problem was recorded.</p>
            ) : (
              <ol className="ai-problems" aria-label="Problems">
                {data.explanation.problems.map((problem) => (
                  <ProblemItem key={problem.id} problem={problem} seek={seek} />
                ))}
              </ol>
            )}
            {/* Without a model both answers give the same reason: said once, under the summary. */}
            {!data.ai.used &&
            summary.data?.ai.used === false &&
            summary.data.ai.reason === data.ai.reason ? null : (
              <ModelNoteView
                note={data.ai}
                feature="explain"
                subjectId={sessionId}
                label="The model's explanation"
                cite={cite}
              />
            )}
          </>
        )}
      </QueryState>
    </>
  );
}

/** One problem: severity, title, when (a button that seeks), its evidence and its likely causes. */
function ProblemItem({ problem, seek }: { problem: Problem; seek(offset: number): void }) {
  const evidence = Object.entries(problem.evidence);
  return (
    <li className={`ai-problem severity-${problem.severity}`} data-problem-id={problem.id}>
      <div className="ai-problem-head">
        <span className={`ai-severity severity-${problem.severity}`}>{severityLabel(problem.severity)}</span>
        <h4>
          {problem.title}
          {problem.count > 1 ? ` (${problem.count} times)` : ''}
        </h4>
        <button
          type="button"
          className="ai-seek"
          aria-label={`Play from ${formatClock(problem.offsetMs)}: ${problem.title}`}
          onClick={() => seek(problem.offsetMs)}
        >
          {formatClock(problem.offsetMs)}
        </button>
      </div>
      {evidence.length === 0 ? null : (
        <dl className="ai-evidence">
          {evidence.map(([name, value]) => (
            <div key={name} className="ai-evidence-pair">
              <dt>{name}</dt>
              <dd>{evidenceText(value)}</dd>
            </div>
          ))}
        </dl>
      )}
      <Causes causes={problem.causes} label={`Likely causes of ${problem.title}`} />
    </li>
  );
}

/** The transcript: its header, then each entry with its time (a button that seeks) and text. */
function TranscriptTab({ sessionId, seek }: SessionAnalysisProps) {
  const transcript = useTranscript(sessionId, true);
  return (
    <QueryState query={transcript}>
      {(data) => (
        <>
          <ul className="ai-transcript-header" aria-label="About the session">
            {data.header.slice(1).map((line) => (
              <li key={line}>{line}</li>
            ))}
          </ul>
          <p className="ai-actions">
            <span className="hint">
              {data.entries.length} entries; a click plays from there. Typed values and masked text are never
              in it.
            </span>
            <CopyButton text={data.text} label="Copy the transcript" />
          </p>
          <ol className="ai-transcript" aria-label="Transcript">
            {data.entries.map((entry) => (
              <li key={entry.id} data-evidence-id={entry.id} data-offset={Math.round(entry.offsetMs)}>
                <button type="button" onClick={() => seek(entry.offsetMs)}>
                  <span className="entry-time">
                    <span className="visually-hidden">Play from </span>
                    {formatClock(entry.offsetMs)}
                  </span>
                  <span className={`entry-text entry-${entry.kind}`}>
                    {entry.text}
                    {entry.repeat === undefined ? '' : ` (${entry.repeat} times)`}
                  </span>
                </button>
                {entry.details === undefined ? null : (
                  <ul className="entry-details">
                    {entry.details.map((line) => (
                      <li key={line}>{line}</li>
                    ))}
                  </ul>
                )}
              </li>
            ))}
          </ol>
          {data.truncated ? <p className="hint">The transcript stops at 5,000 entries.</p> : null}
        </>
      )}
    </QueryState>
  );
}

/** Reproduce: the steps in words and the Playwright script, with a Copy button. */
function ReproduceTab({ sessionId }: { sessionId: string }) {
  const { project } = useWorkspace();
  const reproduction = useQuery({
    queryKey: ['session-repro', project.id, sessionId],
    staleTime: Number.POSITIVE_INFINITY,
    queryFn: () => api<Reproduction>('POST', `/v1/sessions/${encodeURIComponent(sessionId)}/repro`),
  });
  return (
    <QueryState query={reproduction}>
      {(data) => (
        <>
          <h3>Steps</h3>
          {data.steps.length === 0 ? (
            <p>Nothing was done in this session that a script could repeat.</p>
          ) : (
            <ol className="ai-steps" aria-label="Steps to reproduce">
              {data.steps.map((step) => (
                <li key={step}>{step.replace(/^\d+\.\s*/, '')}</li>
              ))}
            </ol>
          )}
          {data.notes.length === 0 ? null : (
            <ul className="hint" aria-label="Notes">
              {data.notes.map((note) => (
                <li key={note}>{note}</li>
              ))}
            </ul>
          )}
          <h3>Playwright test</h3>
          <p className="hint">
            Save it as <code>reproduce.spec.ts</code> and run{' '}
            <code>BASE_URL=https://staging.example.com npx playwright test reproduce.spec.ts</code>: it passes
            while it reproduces the session's errors.
          </p>
          <CodeBlock code={data.script} caption="reproduce.spec.ts" copyLabel="Copy the script" />
        </>
      )}
    </QueryState>
  );
}
