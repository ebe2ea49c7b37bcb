import { z } from 'zod';
import { SEVERITIES } from './explain.ts';
import { DIMENSIONS } from './explain-cluster.ts';

// The API's views of transcripts, explanations and reproductions (zod: they validate what the
// routes answer and make the OpenAPI document).

/** What was measured or recorded: numbers, strings, booleans (a detector's evidence, an error's name). */
const evidenceSchema = z.record(z.string(), z.unknown());

export const transcriptSchema = z.object({
  sessionId: z.string(),
  startedAt: z.iso.datetime(),
  durationMs: z.number().min(0),
  header: z.array(z.string()).describe('What the session is: browser, release, user, counts, missing data'),
  entries: z.array(
    z.object({
      id: z.string().describe('Evidence id: `<seq>.<index>` of an event, `finding:<pc>:<kind>`, `call:<id>`'),
      kind: z.string(),
      offsetMs: z.number().min(0),
      t: z.iso.datetime(),
      text: z.string(),
      details: z.array(z.string()).optional(),
      repeat: z.int().min(2).optional(),
      repeatIds: z
        .array(z.string())
        .optional()
        .describe('Evidence ids of the repeats folded into this entry'),
    }),
  ),
  truncated: z.boolean(),
  text: z.string().describe('The header and entries as text, one line each: `mm:ss [id] text`'),
});

const causeSchema = z.object({
  id: z.string(),
  title: z.string(),
  why: z.string(),
  tryThis: z.array(z.string()),
  confidence: z.enum(['high', 'medium', 'low']),
});

export const explanationSchema = z.object({
  subject: z.object({ type: z.enum(['session', 'call']), id: z.string(), sessionId: z.string() }),
  summary: z.string(),
  problems: z.array(
    z.object({
      id: z.string(),
      kind: z.string(),
      severity: z.enum(SEVERITIES),
      title: z.string(),
      t: z.iso.datetime(),
      offsetMs: z.number().min(0),
      count: z.int().min(1),
      evidence: evidenceSchema,
      evidenceIds: z.array(z.string()),
      callId: z.string().optional(),
      causes: z.array(causeSchema),
    }),
  ),
});

const dimensionValueSchema = z.object({
  value: z.string(),
  occurrences: z.int(),
  share: z.number(),
  baselineShare: z.number(),
  lift: z.number().nullable(),
});

export const clusterExplanationSchema = z.object({
  subject: z.object({ type: z.literal('issue'), id: z.string() }),
  summary: z.string(),
  cluster: z.object({
    kind: z.string(),
    title: z.string(),
    severity: z.string(),
    status: z.string(),
    firstSeenAt: z.iso.datetime(),
    lastSeenAt: z.iso.datetime(),
  }),
  window: z.object({ from: z.iso.datetime(), to: z.iso.datetime() }),
  occurrences: z.int(),
  sessions: z.int(),
  concentrations: z.array(dimensionValueSchema.extend({ dimension: z.enum(DIMENSIONS) })),
  breakdown: z.record(z.enum(DIMENSIONS), z.array(dimensionValueSchema)),
  causes: z.array(causeSchema),
  latest: z.object({ sessionId: z.string(), evidenceId: z.string(), evidence: evidenceSchema }).optional(),
  exampleSessions: z.array(z.string()),
});

export const reproductionSchema = z.object({
  sessionId: z.string(),
  startUrl: z.string().nullable(),
  steps: z.array(z.string()),
  script: z
    .string()
    .describe('A Playwright test (TypeScript, @playwright/test); BASE_URL points it at another deployment'),
  notes: z.array(z.string()),
});
