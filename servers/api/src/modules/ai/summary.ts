import { z } from 'zod';
import { explainSession, formatDuration, type TranscriptSources } from '../analysis/index.ts';
import { modelNoteSchema } from './model-note.ts';

/** Problems a summary names. */
const TOP_PROBLEMS = 5;

export const summarySchema = z.object({
  sessionId: z.string(),
  /** A few sentences: how long, where, what was done, the main problems. */
  summary: z.string(),
  /** The routes visited, in order (each once). */
  routes: z.array(z.string()),
  counts: z.object({
    pages: z.int(),
    clicks: z.int(),
    errors: z.int(),
    failedRequests: z.int(),
    calls: z.int(),
    findings: z.int(),
  }),
  /** The most severe problems, with their evidence ids. */
  problems: z.array(z.object({ id: z.string(), kind: z.string(), severity: z.string(), title: z.string() })),
  ai: modelNoteSchema,
});

/**
 * The deterministic summary of a session from what its transcript is made of.
 *
 * @example
 * ```ts
 * summarizeSession(sources).summary; // 'A 12 min 31 s session in Chrome 131 on macOS: 3 pages (/products, /cart, /checkout/:id), 14 clicks. …'
 * ```
 */
export function summarizeSession(sources: TranscriptSources): Omit<z.infer<typeof summarySchema>, 'ai'> {
  const { session, items } = sources;
  const routes: string[] = [];
  for (const item of items) if (item.kind === 'page' && !routes.includes(item.route)) routes.push(item.route);
  const count = (kinds: readonly string[]) => items.filter((item) => kinds.includes(item.kind)).length;
  const counts = {
    pages: count(['page']),
    clicks: items.reduce(
      (sum, item) => sum + (item.kind === 'click' ? 1 : item.kind === 'rage_click' ? item.count : 0),
      0,
    ),
    errors: count(['error']),
    failedRequests: count(['request']),
    calls: sources.calls.length,
    findings: sources.findings.length,
  };
  const explanation = explainSession(sources);
  const where = [session.browserName, session.osName === null ? null : `on ${session.osName}`]
    .filter(Boolean)
    .join(' ');
  const did = [
    counts.pages === 0
      ? undefined
      : `${counts.pages} page${counts.pages === 1 ? '' : 's'} (${routes.slice(0, 5).join(', ')}${routes.length > 5 ? ', …' : ''})`,
    counts.clicks === 0 ? undefined : `${counts.clicks} click${counts.clicks === 1 ? '' : 's'}`,
    counts.calls === 0 ? undefined : `${counts.calls} call${counts.calls === 1 ? '' : 's'}`,
  ].filter((part): part is string => part !== undefined);
  const summary = `A ${formatDuration(session.durationMs)} session${where === '' ? '' : ` in ${where}`}${
    did.length === 0 ? '.' : `: ${did.join(', ')}.`
  } ${explanation.summary}`;
  return {
    sessionId: session.id,
    summary,
    routes,
    counts,
    problems: explanation.problems.slice(0, TOP_PROBLEMS).map((problem) => ({
      id: problem.id,
      kind: problem.kind,
      severity: problem.severity,
      title: problem.title,
    })),
  };
}
