import { useQuery } from '@tanstack/react-query';
import { api } from '../api.ts';
import { useWorkspace } from '../ui/workspace.tsx';
import type { Problem, Transcript } from './types.ts';

// Where evidence happened: explanations and the model's prose cite evidence ids (`0.14`,
// `finding:pc_1:webrtc_freeze`), which the pages turn into controls that show that moment.

/** What an evidence id points at: its time in the session, and what happened. */
export interface EvidencePlace {
  offsetMs: number;
  text: string;
}

/**
 * A session's transcript (`GET /v1/sessions/{id}/transcript`), kept for the page's life; shared
 * by the Transcript tab and the citations of the session and issue pages.
 */
export function useTranscript(sessionId: string | undefined, enabled: boolean) {
  const { project } = useWorkspace();
  return useQuery({
    queryKey: ['session-transcript', project.id, sessionId],
    enabled: enabled && sessionId !== undefined,
    staleTime: Number.POSITIVE_INFINITY,
    queryFn: () => api<Transcript>('GET', `/v1/sessions/${encodeURIComponent(sessionId ?? '')}/transcript`),
  });
}

/**
 * Each evidence id's place: the problems' own ids (known with the explanation), then every entry
 * of the transcript (and the repeats folded into one) once it has been read.
 *
 * @example
 * ```ts
 * evidencePlaces(explanation.problems, transcript).get('0.14'); // { offsetMs: 4200, text: 'TypeError: …' }
 * ```
 */
export function evidencePlaces(
  problems: readonly Problem[] | undefined,
  transcript: Transcript | undefined,
): Map<string, EvidencePlace> {
  const places = new Map<string, EvidencePlace>();
  for (const problem of problems ?? [])
    places.set(problem.id, { offsetMs: problem.offsetMs, text: problem.title });
  for (const entry of transcript?.entries ?? []) {
    const place = { offsetMs: entry.offsetMs, text: entry.text };
    places.set(entry.id, place);
    for (const id of entry.repeatIds ?? []) places.set(id, place);
  }
  return places;
}
