import { useMutation } from '@tanstack/react-query';
import { Fragment, type ReactNode, useState } from 'react';
import { api } from '../api.ts';
import { ErrorText } from '../ui/status.tsx';
import { useWorkspace } from '../ui/workspace.tsx';
import type { AiFeature, ModelNote } from './types.ts';
import './ai.css';

// The model's part of an AI answer (servers/api/README.md, The model): its prose, marked as a
// model's with the model's name, each evidence id it cites a control that shows that evidence,
// and a rating; or, when no model took part, why not, in small text.

/** How an evidence id is shown: a button that seeks the replay, a link to the replay. */
export type Cite = (id: string) => ReactNode;

/** A citation as the server reads them: `[id]`, no whitespace inside (prose.ts). */
const CITATION = /\[([^\]\s]{1,160})\]/g;

/**
 * A text with each citation (`[id]`) of a known evidence id replaced by `cite(id)`: the model's
 * prose, and the deterministic summaries, which cite their problems' ids the same way.
 */
export function withCitations(text: string, known: ReadonlySet<string>, cite: Cite): ReactNode[] {
  const parts: ReactNode[] = [];
  let last = 0;
  for (const match of text.matchAll(CITATION)) {
    const id = match[1] as string;
    if (!known.has(id)) continue;
    parts.push(text.slice(last, match.index));
    parts.push(
      <Fragment key={`${match.index}:${id}`}>
        [<span className="ai-citation">{cite(id)}</span>]
      </Fragment>,
    );
    last = match.index + match[0].length;
  }
  parts.push(text.slice(last));
  return parts;
}

/**
 * The model's note of an answer: its prose (paragraphs, citations of evidence as `cite` makes
 * them) with the model's name and a rating, or the reason no model took part.
 *
 * @example
 * ```tsx
 * <ModelNoteView note={answer.ai} feature="explain" subjectId={sessionId} label="The model's explanation" cite={(id) => <code>{id}</code>} />
 * ```
 */
export function ModelNoteView({
  note,
  feature,
  subjectId,
  label,
  cite,
}: {
  note: ModelNote;
  feature: AiFeature;
  subjectId: string;
  /** The region's name ("The model's summary"): unique on the page. */
  label: string;
  cite: Cite;
}) {
  if (!note.used) return <p className="hint ai-reason">{note.reason}</p>;
  const known = new Set(note.evidenceIds);
  const paragraphs = note.text
    .split(/\n\s*\n/)
    .map((paragraph) => paragraph.trim())
    .filter((paragraph) => paragraph !== '');
  return (
    <section className="ai-note" aria-label={label}>
      <p className="ai-note-source">
        <span className="ai-badge">AI</span> Written by the model <strong>{note.model}</strong> from what was
        recorded: check it against the evidence it cites.
      </p>
      <div className="ai-prose">
        {paragraphs.map((paragraph, index) => (
          // biome-ignore lint/suspicious/noArrayIndexKey: the prose's paragraphs keep their order
          <p key={index}>{withCitations(paragraph, known, cite)}</p>
        ))}
      </div>
      <Feedback feature={feature} subjectId={subjectId} model={note.model} />
    </section>
  );
}

/**
 * Thumbs up or down on a model's answer (`POST /v1/ai/feedback`, `ai:write`: members, admins and
 * owners; viewers see no buttons). A second rating is recorded too: the latest counts.
 */
function Feedback({ feature, subjectId, model }: { feature: AiFeature; subjectId: string; model: string }) {
  const { organization } = useWorkspace();
  const [rating, setRating] = useState<'up' | 'down'>();
  const send = useMutation({
    mutationFn: (chosen: 'up' | 'down') =>
      api<{ id: string }>('POST', '/v1/ai/feedback', { feature, subjectId, rating: chosen, model }),
    onSuccess: (_, chosen) => setRating(chosen),
  });
  if (organization.role === 'viewer') return null;
  return (
    <div className="ai-feedback">
      <span>Was this useful?</span>
      <button
        type="button"
        aria-pressed={rating === 'up'}
        disabled={send.isPending}
        onClick={() => send.mutate('up')}
      >
        <Thumb up /> Useful
      </button>
      <button
        type="button"
        aria-pressed={rating === 'down'}
        disabled={send.isPending}
        onClick={() => send.mutate('down')}
      >
        <Thumb up={false} /> Not useful
      </button>
      <span role="status" className="ai-feedback-status">
        {rating === undefined ? '' : 'Thanks: your rating was saved.'}
      </span>
      {send.error ? <ErrorText>{send.error.message}</ErrorText> : null}
    </div>
  );
}

/** A thumb up or down (Feather's icons, MIT), drawn in the text's colour; the button's words name it. */
function Thumb({ up }: { up: boolean }) {
  return (
    <svg
      className="ai-thumb"
      viewBox="0 0 24 24"
      width="16"
      height="16"
      aria-hidden="true"
      fill="none"
      stroke="currentColor"
      strokeWidth="2"
      strokeLinecap="round"
      strokeLinejoin="round"
    >
      <path
        d={
          up
            ? 'M14 9V5a3 3 0 0 0-3-3l-4 9v11h11.28a2 2 0 0 0 2-1.7l1.38-9a2 2 0 0 0-2-2.3zM7 22H4a2 2 0 0 1-2-2v-7a2 2 0 0 1 2-2h3'
            : 'M10 15v4a3 3 0 0 0 3 3l4-9V2H5.72a2 2 0 0 0-2 1.7l-1.38 9a2 2 0 0 0 2 2.3zm7-13h2.67A2.31 2.31 0 0 1 22 4v7a2.31 2.31 0 0 1-2.33 2H17'
        }
      />
    </svg>
  );
}
