// The read-only tools over a project's data that a model may call: the chat's tools
// (`POST /v1/ai/chat`) and the MCP endpoint's (`/mcp`). Each is a zod input schema, the scope it
// needs, and a function of the caller's project; every query is scoped to that project. What a
// tool answers is bounded and scrubbed (scrub.ts): it goes to a model.

import type { Kysely } from 'kysely';
import { z } from 'zod';
import type { BlobStore } from '../../platform/blob-store/index.ts';
import type { MasterKey } from '../../platform/crypto/index.ts';
import type { Database } from '../../platform/database/schema.ts';
import type { Project } from '../../platform/database/tables/projects.table.ts';
import type { Scope } from '../../platform/http/authentication.ts';
import {
  buildTranscript,
  explainCall,
  explainCluster,
  explainSession,
  readTranscriptSources,
} from '../analysis/index.ts';
import { callOverview, findCallsPage, toCallSummary } from '../calls/index.ts';
import {
  findCluster,
  findClustersPage,
  findLatestClusterError,
  withCount,
  withCounts,
} from '../issues/index.ts';
import { readSettings } from '../projects/index.ts';
import { transcriptForModel } from './prose.ts';
import { scrubValue } from './scrub.ts';

/** What a tool runs with: the stores, the caller's project and scopes. */
export interface ToolContext {
  database: Kysely<Database>;
  blobStore: BlobStore;
  masterKey: MasterKey;
  log: { error(details: object, message: string): void };
  project: Project;
  scopes: ReadonlySet<Scope>;
}

/** A read-only tool. */
export interface ReadTool<Input extends z.ZodType = z.ZodType> {
  name: string;
  title: string;
  description: string;
  input: Input;
  /** The scopes the caller needs. */
  scopes: readonly Scope[];
  run(context: ToolContext, input: z.infer<Input>): Promise<unknown>;
}

/** Most items a listing tool answers. */
const MAX_ITEMS = 50;
const DAY_MS = 24 * 3600 * 1000;

const idOf = (prefix: string) =>
  z.string().regex(new RegExp(`^${prefix}_[0-9A-HJKMNP-TV-Z]{26}$`), `a ${prefix}_… id`);
const isoTime = z.iso.datetime({ offset: true });

function tool<Input extends z.ZodType>(definition: ReadTool<Input>): ReadTool<Input> {
  return definition;
}

/** A tool's answer when the thing asked for is not in the project. */
const notFound = (what: string) => ({ error: `No ${what} in this project` });

const READ_TOOLS: readonly ReadTool[] = [
  tool({
    name: 'get_session_transcript',
    title: "A session's transcript",
    description:
      'The transcript of a recorded session: a compact timeline of pages, clicks, typing (never values), failed requests, errors, call events and detector findings, each line with its evidence id in brackets.',
    input: z.object({ sessionId: idOf('ses').describe('The session id (ses_…)') }),
    scopes: ['sessions:read'],
    async run(context, { sessionId }) {
      const sources = await readTranscriptSources(context, context.log, context.project, sessionId);
      if (sources === undefined) return notFound(`session ${sessionId}`);
      const strict = readSettings(context.project.settings).privacy.mode === 'strict';
      return {
        sessionId,
        transcript: transcriptForModel(buildTranscript(sources), { strict, budget: 30_000 }),
      };
    },
  }),
  tool({
    name: 'explain_session',
    title: "Explain a session's problems",
    description:
      "A session's problems (detector findings, errors, failed requests, rage and dead clicks, poor vitals), each with its evidence ids and likely causes ranked, from written rules.",
    input: z.object({ sessionId: idOf('ses').describe('The session id (ses_…)') }),
    scopes: ['sessions:read'],
    async run(context, { sessionId }) {
      const sources = await readTranscriptSources(context, context.log, context.project, sessionId);
      return sources === undefined ? notFound(`session ${sessionId}`) : explainSession(sources);
    },
  }),
  tool({
    name: 'list_calls',
    title: 'List calls',
    description:
      "The project's WebRTC calls, newest first, with quality score, setup time, relay, network and detected issues.",
    input: z.object({
      from: isoTime.optional().describe('Calls started at or after (ISO time)'),
      to: isoTime.optional().describe('Calls started before (ISO time)'),
      relayed: z.boolean().optional().describe('Only calls relayed through TURN (true) or direct (false)'),
      failedToConnect: z.boolean().optional().describe('Only calls that never connected'),
      maxQuality: z.int().min(0).max(100).optional().describe('Only calls with a quality score at most this'),
      hasIssue: z.boolean().optional().describe('Only calls with a detector finding'),
      limit: z.int().min(1).max(MAX_ITEMS).optional().describe('How many (default 20)'),
    }),
    scopes: ['calls:read'],
    async run(context, input) {
      const page = await findCallsPage(context.database, context.project.id, {
        filters: {
          ...(input.from === undefined ? {} : { from: new Date(input.from) }),
          ...(input.to === undefined ? {} : { to: new Date(input.to) }),
          ...(input.relayed === undefined ? {} : { relayed: input.relayed }),
          ...(input.failedToConnect === undefined ? {} : { failedToConnect: input.failedToConnect }),
          ...(input.maxQuality === undefined ? {} : { maxQuality: input.maxQuality }),
          ...(input.hasIssue === undefined ? {} : { hasIssue: input.hasIssue }),
        },
        limit: input.limit ?? 20,
      });
      return { calls: page.calls.map(toCallSummary), more: page.next !== undefined };
    },
  }),
  tool({
    name: 'get_call',
    title: 'Get a call',
    description: 'One WebRTC call: its summary and its detector findings with their evidence.',
    input: z.object({ callId: idOf('call').describe('The call id (call_…)') }),
    scopes: ['calls:read'],
    async run(context, { callId }) {
      const call = await context.database
        .selectFrom('calls')
        .selectAll()
        .where('project_id', '=', context.project.id)
        .where('id', '=', callId)
        .executeTakeFirst();
      if (call === undefined) return notFound(`call ${callId}`);
      const findings = await context.database
        .selectFrom('call_findings')
        .select(['kind', 'severity', 't', 'track', 'evidence'])
        .where('project_id', '=', context.project.id)
        .where('session_id', '=', call.session_id)
        .where('pc', 'in', [call.pc, ''])
        .orderBy('t')
        .execute();
      return {
        call: toCallSummary(call),
        findings: findings.map((finding) => ({ ...finding, t: new Date(finding.t).toISOString() })),
      };
    },
  }),
  tool({
    name: 'explain_call',
    title: "Explain a call's problems",
    description:
      "A call's detector findings with their evidence ids and likely causes ranked, read in the call's context.",
    input: z.object({ callId: idOf('call').describe('The call id (call_…)') }),
    scopes: ['calls:read', 'sessions:read'],
    async run(context, { callId }) {
      const call = await context.database
        .selectFrom('calls')
        .select('session_id')
        .where('project_id', '=', context.project.id)
        .where('id', '=', callId)
        .executeTakeFirst();
      if (call === undefined) return notFound(`call ${callId}`);
      const sources = await readTranscriptSources(context, context.log, context.project, call.session_id);
      const explanation = sources === undefined ? undefined : explainCall(sources, callId);
      return explanation ?? notFound(`call ${callId}`);
    },
  }),
  tool({
    name: 'calls_overview',
    title: 'Calls overview',
    description:
      'Over the calls started in a period (default: the last 7 days): connect failure rate, relay rate, setup time percentiles, quality distribution, top failure reasons, breakdowns by network, browser, device and release.',
    input: z.object({
      from: isoTime.optional().describe('Start of the period (ISO time)'),
      to: isoTime.optional().describe('End of the period (ISO time)'),
    }),
    scopes: ['calls:read'],
    async run(context, input) {
      const to = input.to === undefined ? new Date() : new Date(input.to);
      const from = input.from === undefined ? new Date(to.getTime() - 7 * DAY_MS) : new Date(input.from);
      const overview = await callOverview(context.database, context.project.id, { from, to });
      return { from: from.toISOString(), to: to.toISOString(), ...overview };
    },
  }),
  tool({
    name: 'list_issues',
    title: 'List issues',
    description:
      "The project's issues (clusters of detector findings and errors across sessions), most recently seen first, with counts.",
    input: z.object({
      status: z.enum(['open', 'resolved', 'ignored']).optional().describe('Only issues in this status'),
      kind: z
        .string()
        .max(64)
        .optional()
        .describe('Only issues of this kind: a detector kind (webrtc_…) or error'),
      limit: z.int().min(1).max(MAX_ITEMS).optional().describe('How many (default 20)'),
    }),
    scopes: ['issues:read'],
    async run(context, input) {
      const page = await findClustersPage(context.database, context.project.id, {
        filters: {
          ...(input.status === undefined ? {} : { status: input.status }),
          ...(input.kind === undefined ? {} : { kind: input.kind }),
        },
        limit: input.limit ?? 20,
      });
      return {
        issues: await withCounts(context.database, context.project.id, page.clusters),
        more: page.next !== undefined,
      };
    },
  }),
  tool({
    name: 'get_issue',
    title: 'Get an issue',
    description:
      'One issue: its kind, title, severity, status, counts, and for an error issue its latest error with its stack frames.',
    input: z.object({ issueId: idOf('cl').describe('The issue id (cl_…)') }),
    scopes: ['issues:read'],
    async run(context, { issueId }) {
      const cluster = await findCluster(context.database, context.project.id, issueId);
      if (cluster === undefined) return notFound(`issue ${issueId}`);
      const latest =
        cluster.kind === 'error'
          ? await findLatestClusterError(context.database, context.project.id, issueId)
          : undefined;
      return {
        ...(await withCount(context.database, context.project.id, cluster)),
        ...(latest === undefined
          ? {}
          : {
              latestError: {
                sessionId: latest.session_id,
                name: latest.name,
                message: latest.message,
                frames: Array.isArray(latest.details.frames) ? latest.details.frames.slice(0, 10) : undefined,
              },
            }),
      };
    },
  }),
  tool({
    name: 'explain_issue',
    title: 'Explain an issue',
    description:
      'An issue over its occurrences: where it concentrates (release, browser, OS, device, network) against the project, and its likely causes.',
    input: z.object({ issueId: idOf('cl').describe('The issue id (cl_…)') }),
    scopes: ['issues:read'],
    async run(context, { issueId }) {
      const cluster = await findCluster(context.database, context.project.id, issueId);
      return cluster === undefined
        ? notFound(`issue ${issueId}`)
        : explainCluster(context.database, context.project.id, cluster);
    },
  }),
];

/** The tools the caller may use (it holds each one's scopes). */
export function toolsFor(scopes: ReadonlySet<Scope>, tools: readonly ReadTool[] = READ_TOOLS): ReadTool[] {
  return tools.filter((candidate) => candidate.scopes.every((scope) => scopes.has(scope)));
}

/**
 * Runs a tool for the caller: its input validated, its answer scrubbed. A tool the caller lacks a
 * scope for, or an invalid input, answers `{ error }` (a model reads it and corrects itself).
 */
export async function runTool(tool: ReadTool, context: ToolContext, input: unknown): Promise<unknown> {
  const missing = tool.scopes.filter((scope) => !context.scopes.has(scope));
  if (missing.length > 0) return { error: `This caller lacks the ${missing.join(', ')} scope` };
  const parsed = tool.input.safeParse(input);
  if (!parsed.success)
    return {
      error: `Invalid input: ${parsed.error.issues.map((issue) => `${issue.path.join('.') || 'input'}: ${issue.message}`).join('; ')}`,
    };
  return scrubValue(await tool.run(context, parsed.data));
}
