import { deviceClassSchema, severitySchema } from '@svc/protocol';
import { z } from 'zod';
import { CLUSTER_KINDS } from '../notifications/index.ts';

// The body of `POST /v1/search`: one structured query over sessions, calls and issues. It is also
// the input of the MCP endpoint's search tool and of the model's tool calls (natural language to
// this query), so every field says what it does (`.describe()` becomes the tool's schema), and
// the schema has no transforms: its JSON Schema is the same for input and output.

/** What a search returns. */
export const SEARCH_TYPES = ['session', 'call', 'issue'] as const;
export type SearchType = (typeof SEARCH_TYPES)[number];

/** Longest `q`. */
const MAX_QUERY_LENGTH = 256;
/** Largest page. */
const MAX_SEARCH_LIMIT = 100;
export const DEFAULT_SEARCH_LIMIT = 20;
/** Longest duration in the duration filters: 31 days, in seconds. */
const MAX_DURATION_SECONDS = 31 * 24 * 3600;

const name = z.string().trim().min(1).max(128);
const dateTime = z.iso.datetime({ offset: true });
const seconds = z.number().min(0).max(MAX_DURATION_SECONDS);
const quality = z.number().min(0).max(100);

const searchFiltersSchema = z
  .strictObject({
    browser: name.optional().describe('Sessions and calls: browser name, case-insensitive (e.g. "Chrome")'),
    os: name
      .optional()
      .describe('Sessions and calls: operating system name, case-insensitive (e.g. "macOS")'),
    device: deviceClassSchema.optional().describe('Sessions and calls: "desktop", "mobile" or "tablet"'),
    release: name.optional().describe('Sessions and calls: the exact release (e.g. "web@2.4.0")'),
    environment: name.optional().describe('Sessions and calls: the exact environment (e.g. "production")'),
    user: z
      .string()
      .trim()
      .min(1)
      .max(256)
      .optional()
      .describe("Sessions and calls: the end user's exact id or e-mail address"),
    hasErrors: z
      .boolean()
      .optional()
      .describe('Sessions: true for sessions with at least one error, false for none'),
    urlContains: z
      .string()
      .min(1)
      .max(256)
      .optional()
      .describe('Sessions and calls: case-insensitive text in the session\'s page URL (e.g. "/checkout")'),
    minDurationSec: seconds.optional().describe('Sessions and calls: lasted at least this many seconds'),
    maxDurationSec: seconds.optional().describe('Sessions and calls: lasted at most this many seconds'),
    relayed: z
      .boolean()
      .optional()
      .describe('Calls: true for calls that went through a TURN relay, false for none'),
    failedToConnect: z
      .boolean()
      .optional()
      .describe('Calls: true for calls that never connected, false for calls that did'),
    minQuality: quality
      .optional()
      .describe('Calls: quality score (0..100) at least this; calls without a score never match'),
    maxQuality: quality
      .optional()
      .describe('Calls: quality score (0..100) at most this; calls without a score never match'),
    status: z.enum(['open', 'resolved', 'ignored']).optional().describe('Issues: their status'),
    kind: z
      .enum(CLUSTER_KINDS)
      .optional()
      .describe('Issues: their kind, "error" or a detector kind such as "webrtc_packet_loss"'),
    severity: severitySchema
      .optional()
      .describe(
        "At least this severe (critical > high > medium > low > info): a session's level, a call's worst finding, an issue's severity",
      ),
  })
  .check((context) => {
    const { minDurationSec, maxDurationSec, minQuality, maxQuality } = context.value;
    const bounds = [
      ['minDurationSec', minDurationSec, 'maxDurationSec', maxDurationSec],
      ['minQuality', minQuality, 'maxQuality', maxQuality],
    ] as const;
    for (const [lowName, low, highName, high] of bounds) {
      if (low !== undefined && high !== undefined && low > high)
        context.issues.push({
          code: 'custom',
          message: `\`${highName}\` must be at least \`${lowName}\``,
          path: [highName],
          input: context.value,
        });
    }
  })
  .describe(
    'Filters, combined with AND. Each narrows the result types it names and leaves out the others: `relayed` returns calls only',
  );
export type SearchFilters = z.infer<typeof searchFiltersSchema>;

/**
 * `POST /v1/search`: free text and filters over the project's sessions, calls and issues, ranked.
 * Parse with it before calling `search` (it checks ranges the types cannot say).
 *
 * @example
 * ```ts
 * const query = searchQuerySchema.parse({ q: 'checkout "payment declined"', filters: { hasErrors: true }, limit: 10 });
 * ```
 */
export const searchQuerySchema = z
  .strictObject({
    q: z
      .string()
      .max(MAX_QUERY_LENGTH)
      .optional()
      .describe(
        'Free text: words (all must match; "quoted phrase", -excluded, or), matched against error messages, custom event names, URLs, users, releases, call failures and findings, issue titles; also found as a substring (a URL fragment such as "checkout/83"). Omit to list newest first',
      ),
    types: z
      .array(z.enum(SEARCH_TYPES))
      .min(1)
      .max(SEARCH_TYPES.length)
      .optional()
      .describe(
        'Which results: "session", "call", "issue". Default: every type the caller may read (and the filters apply to)',
      ),
    from: dateTime
      .optional()
      .describe(
        'ISO 8601 date-time (e.g. 2026-12-01T00:00:00Z): sessions and calls that started at or after it, issues last seen at or after it',
      ),
    to: dateTime
      .optional()
      .describe('ISO 8601 date-time: sessions and calls that started before it, issues first seen before it'),
    filters: searchFiltersSchema.optional(),
    limit: z
      .int()
      .min(1)
      .max(MAX_SEARCH_LIMIT)
      .optional()
      .describe(`Results per page, 1..${MAX_SEARCH_LIMIT} (default ${DEFAULT_SEARCH_LIMIT})`),
    cursor: z
      .string()
      .max(256)
      .optional()
      .describe('The nextCursor of the previous page, with the same query, for the next page'),
  })
  .check((context) => {
    const { from, to } = context.value;
    if (from !== undefined && to !== undefined && Date.parse(from) >= Date.parse(to))
      context.issues.push({
        code: 'custom',
        message: '`to` must be after `from`',
        path: ['to'],
        input: context.value,
      });
  });
export type SearchQuery = z.infer<typeof searchQuerySchema>;
