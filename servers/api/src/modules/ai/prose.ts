// The model's prose on top of a deterministic result (servers/api/README.md, The model): what is
// sent is the transcript (which never holds what the SDK masked, nor typed values) and structured
// data, cut to a budget, stripped further in strict privacy mode, and scrubbed last (scrub.ts); what
// comes back is kept with the evidence ids it quotes that the transcript really has.

import { generateText } from 'ai';
import type { Kysely } from 'kysely';
import type { Database } from '../../platform/database/schema.ts';
import type { Project } from '../../platform/database/tables/projects.table.ts';
import {
  type AnalysisStores,
  buildTranscript,
  type ClusterExplanation,
  type Explanation,
  readTranscriptSources,
  type Transcript,
} from '../analysis/index.ts';
import { readSettings } from '../projects/index.ts';
import { type ModelAccess, recordUsage } from './model.ts';
import { type ModelNote, noModel } from './model-note.ts';
import { scrubText, scrubValue } from './scrub.ts';

/** Most characters of transcript sent (about 10,000 tokens). */
const TRANSCRIPT_BUDGET = 40_000;
/** Most tokens a prose answer may take. */
const MAX_OUTPUT_TOKENS = 900;

/** The instructions every prose answer starts from. */
export const GROUNDING =
  'You help developers understand recorded web sessions and WebRTC calls. Use only the transcript and the structured data given; never guess what is masked ("[masked text]", values not recorded, "[email]", "[card]", "[token]"). Cite the evidence id of every fact you use in square brackets exactly as written, for example [1.12] or [finding:pc_01J…:webrtc_freeze]. Be brief and concrete.';

/** A URL's query string and fragment, removed in strict privacy mode (what the SDK's strict mode withholds). */
const QUERY = /((?:https?:\/\/[^\s?#)"]+)?\/[^\s?#)"]*)[?#][^\s)"]*/g;

/**
 * The transcript as a model may read it: its header and entries as lines (an error's frames
 * under it), in strict privacy mode without query strings, fragments and custom events'
 * properties; cut to a budget that keeps the header, the `focus` entries and their neighbours, then
 * as many others as fit in time order (the cuts say how many were left out); scrubbed last.
 *
 * @example
 * ```ts
 * transcriptForModel(transcript, { strict: false, focus: new Set(['1.12']) });
 * ```
 */
export function transcriptForModel(
  transcript: Transcript,
  options: { strict: boolean; focus?: ReadonlySet<string>; budget?: number },
): string {
  const budget = options.budget ?? TRANSCRIPT_BUDGET;
  const strip = (text: string) => (options.strict ? text.replace(QUERY, '$1') : text);
  const lines = transcript.entries.map((entry) => {
    const minutes = Math.floor(entry.offsetMs / 60_000);
    const seconds = Math.floor((entry.offsetMs % 60_000) / 1_000);
    let text = entry.text;
    if (options.strict && entry.kind === 'custom') text = text.replace(/^(Event "[^"]*")( \{.*\})?/, '$1');
    const head = `${String(minutes).padStart(2, '0')}:${String(seconds).padStart(2, '0')} [${entry.id}] ${strip(text)}${
      entry.repeat === undefined ? '' : ` (×${entry.repeat})`
    }`;
    return [head, ...(entry.details ?? []).map((detail) => `      ${strip(detail)}`)].join('\n');
  });
  const header = transcript.header.map(strip).join('\n');
  let kept: boolean[];
  const total = lines.reduce((sum, line) => sum + line.length + 1, header.length + 1);
  if (total <= budget) kept = lines.map(() => true);
  else {
    kept = lines.map(() => false);
    let left = budget - header.length - 200;
    const take = (index: number) => {
      const line = lines[index];
      if (line === undefined || kept[index] === true || left < line.length + 1) return;
      kept[index] = true;
      left -= line.length + 1;
    };
    transcript.entries.forEach((entry, index) => {
      if (options.focus?.has(entry.id) === true)
        for (let near = index - 2; near <= index + 2; near += 1) take(near);
    });
    for (let index = 0; index < lines.length && left > 0; index += 1) take(index);
  }
  const out: string[] = [header, ''];
  let skipped = 0;
  lines.forEach((line, index) => {
    if (kept[index] === true) {
      if (skipped > 0) out.push(`… ${skipped} entries left out …`);
      skipped = 0;
      out.push(line);
    } else skipped += 1;
  });
  if (skipped > 0) out.push(`… ${skipped} entries left out …`);
  return scrubText(out.join('\n')).text;
}

/** Structured data as a model may read it: every string scrubbed, as compact JSON. */
function dataForModel(value: unknown): string {
  return JSON.stringify(scrubValue(value));
}

/** The evidence ids a text quotes (`[1.12]`, `[finding:pc_…:webrtc_freeze]`) that are in `known`, each once. */
function quotedEvidence(text: string, known: ReadonlySet<string>): string[] {
  const ids: string[] = [];
  for (const match of text.matchAll(/\[([^\]\s]{1,160})\]/g)) {
    const id = match[1] as string;
    if (known.has(id) && !ids.includes(id)) ids.push(id);
  }
  return ids;
}

/** Every evidence id of a transcript (folded repeats included). */
export function evidenceIdsOf(transcript: Transcript): Set<string> {
  return new Set(transcript.entries.flatMap((entry) => [entry.id, ...(entry.repeatIds ?? [])]));
}

/** Where a model's failure is reported. */
interface ProseLog {
  warn(details: object, message: string): void;
}

/**
 * Prose from the model for `prompt` (after the grounding instructions), its tokens counted. A
 * model that fails (down, refusing, timing out) leaves the deterministic result: the note says why.
 */
export async function writeProse(
  database: Kysely<Database>,
  access: Extract<ModelAccess, { allowed: true }>,
  request: { prompt: string; known: ReadonlySet<string>; log: ProseLog },
): Promise<ModelNote> {
  try {
    const result = await generateText({
      model: access.model,
      system: GROUNDING,
      prompt: request.prompt,
      maxOutputTokens: MAX_OUTPUT_TOKENS,
      temperature: 0.2,
      maxRetries: 1,
    });
    await recordUsage(database, access, result.usage);
    return {
      used: true,
      model: access.name,
      text: result.text,
      evidenceIds: quotedEvidence(result.text, request.known),
    };
  } catch (error) {
    request.log.warn({ err: error, feature: access.feature }, 'the model did not answer');
    return noModel(
      `The model did not answer (${error instanceof Error ? error.message.slice(0, 200) : 'error'}); this is the deterministic result.`,
    );
  }
}

/** The problems of an explanation as a model reads them: the first 10, their 2 likeliest causes. */
function problemsForModel(explanation: Explanation): unknown {
  return explanation.problems.slice(0, 10).map((problem) => ({
    id: problem.id,
    kind: problem.kind,
    severity: problem.severity,
    title: problem.title,
    count: problem.count,
    evidence: problem.evidence,
    evidenceIds: problem.evidenceIds,
    causes: problem.causes.slice(0, 2).map((cause) => ({
      title: cause.title,
      confidence: cause.confidence,
      why: cause.why,
      tryThis: cause.tryThis.slice(0, 2),
    })),
  }));
}

function isStrict(project: Pick<Project, 'settings'>): boolean {
  return readSettings(project.settings).privacy.mode === 'strict';
}

/** What a prose answer about a session (or call) is asked: its transcript, its problems, the task. */
export function sessionPrompt(
  transcript: Transcript,
  explanation: Explanation,
  project: Pick<Project, 'settings'>,
  task: string,
): string {
  const focus = new Set(explanation.problems.flatMap((problem) => problem.evidenceIds));
  return `Transcript of the session:
${transcriptForModel(transcript, { strict: isStrict(project), focus })}

Its problems, found deterministically, most severe first (JSON):
${dataForModel(problemsForModel(explanation))}

${task}`;
}

/** What a prose answer about an issue is asked: its explanation and the transcript of its latest occurrence's session. */
export async function clusterPrompt(
  stores: AnalysisStores,
  log: { error(details: object, message: string): void },
  project: Pick<Project, 'id' | 'wrapped_data_key' | 'settings'>,
  explanation: ClusterExplanation,
): Promise<{ prompt: string; known: ReadonlySet<string> }> {
  const latest = explanation.latest;
  const sources =
    latest === undefined ? undefined : await readTranscriptSources(stores, log, project, latest.sessionId);
  const transcript = sources === undefined ? undefined : buildTranscript(sources);
  const context =
    transcript === undefined || latest === undefined
      ? ''
      : `Transcript of the session of its latest occurrence (${latest.evidenceId}):
${transcriptForModel(transcript, { strict: isStrict(project), focus: new Set([latest.evidenceId]), budget: 20_000 })}

`;
  const { breakdown: _breakdown, ...brief } = explanation;
  return {
    prompt: `${context}The issue, explained deterministically over its occurrences (JSON):
${dataForModel(brief)}

Explain this issue to a developer: what it is, where it concentrates (releases, browsers, devices, networks) and what that suggests, the most likely cause and what to try first. Cite evidence ids from the transcript.`,
    known: transcript === undefined ? new Set() : evidenceIdsOf(transcript),
  };
}
