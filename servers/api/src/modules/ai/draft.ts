// A proposed fix for an error issue (servers/api/README.md, The model): the model is given the
// error and its frames mapped through the project's source maps, with the source lines the maps
// carry, and answers a unified diff. The diff is checked to be one (files, hunks) and is never
// applied: a person reads it and opens the pull request.

import { generateText } from 'ai';
import type { Kysely } from 'kysely';
import type { Database } from '../../platform/database/schema.ts';
import { type ModelAccess, recordUsage } from './model.ts';
import type { ModelNote } from './model-note.ts';
import { noModel } from './model-note.ts';
import { scrubText } from './scrub.ts';

/** A frame as processing stored it: mapped ones carry their source lines. */
interface DraftFrame {
  function?: string;
  file?: string;
  line?: number;
  column?: number;
  mapped: boolean;
  context?: { before: string[]; line: string; after: string[] };
}

const INSTRUCTIONS =
  'You propose minimal fixes for JavaScript/TypeScript errors. You are given an error and its stack frames mapped to the original source, with the source lines around each frame. Answer with one unified diff (---/+++ file headers with the paths exactly as given, @@ hunks whose context lines match the source shown) inside a ```diff fenced block, then one or two sentences on why it fixes the error. Change as little as possible; never invent files.';

/** The first fenced diff of an answer, if it is a unified diff: file headers and at least one hunk. */
export function extractDiff(text: string): string | null {
  const fenced = /```(?:diff|patch)?\s*\n([\s\S]*?)```/.exec(text);
  const candidate = (fenced?.[1] ?? text).trim();
  const lines = candidate.split('\n');
  const hasFiles =
    lines.some((line) => line.startsWith('--- ')) && lines.some((line) => line.startsWith('+++ '));
  const hasHunk = lines.some((line) => /^@@ -\d+(?:,\d+)? \+\d+(?:,\d+)? @@/.test(line));
  return hasFiles && hasHunk ? `${candidate}\n` : null;
}

/** The source around a mapped frame, numbered, as the model reads it. */
function sourceOf(frame: DraftFrame): string {
  if (frame.context === undefined || frame.line === undefined) return '';
  const first = frame.line - frame.context.before.length;
  const lines = [...frame.context.before, frame.context.line, ...frame.context.after];
  return lines
    .map(
      (text, index) =>
        `${String(first + index).padStart(5)}${first + index === frame.line ? ' >' : '  '} ${text}`,
    )
    .join('\n');
}

/**
 * The model's proposed patch for an error, from its mapped frames and their source lines: `diff`
 * when it answered a unified diff (else null, and why), with its tokens counted.
 */
export async function draftPatch(
  database: Kysely<Database>,
  access: Extract<ModelAccess, { allowed: true }>,
  request: {
    error: { name: string; message?: string; frames: DraftFrame[] };
    log: { warn(details: object, message: string): void };
  },
): Promise<{ diff: string | null; reason?: string; ai: ModelNote }> {
  const { error } = request;
  const mapped = error.frames.filter((frame) => frame.mapped).slice(0, 5);
  const prompt = `Error: ${scrubText(`${error.name}${error.message === undefined ? '' : `: ${error.message}`}`).text}

Frames, top first, mapped to the original source:
${mapped
  .map(
    (frame) => `at ${frame.function ?? '<anonymous>'} (${frame.file}:${frame.line}:${frame.column})
${scrubText(sourceOf(frame)).text}`,
  )
  .join('\n\n')}

Propose the fix.`;
  try {
    const result = await generateText({
      model: access.model,
      system: INSTRUCTIONS,
      prompt,
      maxOutputTokens: 1_500,
      temperature: 0.1,
      maxRetries: 1,
    });
    await recordUsage(database, access, result.usage);
    const diff = extractDiff(result.text);
    const ai: ModelNote = { used: true, model: access.name, text: result.text, evidenceIds: [] };
    return diff === null
      ? { diff: null, reason: 'The model did not answer a unified diff.', ai }
      : { diff, ai };
  } catch (failure) {
    request.log.warn({ err: failure }, 'the model did not answer');
    const reason = `The model did not answer (${failure instanceof Error ? failure.message.slice(0, 200) : 'error'}).`;
    return { diff: null, reason, ai: noModel(reason) };
  }
}
