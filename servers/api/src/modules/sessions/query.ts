import { deviceClassSchema, idSchema, severitySchema } from '@svc/protocol';
import { z } from 'zod';
import {
  booleanParameter,
  checkTimeRange,
  integerParameter,
  numberParameter,
  textParameter,
  timeParameter,
} from '../../platform/http/query.ts';
import type { SessionFilters } from './session-queries.ts';

/** Sessions' ids in paths (`ses_<ULID>`): anything else is a 400, so no path syntax reaches a query. */
export const sessionIdSchema = idSchema('ses');
export const visitIdSchema = idSchema('vis');

/** Longest `q` and `urlContains`. */
const MAX_SEARCH_LENGTH = 200;

/** Largest page of sessions. */
const MAX_SESSIONS_LIMIT = 200;
export const DEFAULT_SESSIONS_LIMIT = 50;

/** Longest session in the duration filters: 31 days, in seconds. */
const MAX_DURATION_SECONDS = 31 * 24 * 3600;

export const sessionListQuerySchema = z
  .strictObject({
    limit: integerParameter(1, MAX_SESSIONS_LIMIT)
      .optional()
      .describe(`Page size, 1..${MAX_SESSIONS_LIMIT} (default ${DEFAULT_SESSIONS_LIMIT})`),
    cursor: z.string().max(256).optional().describe('nextCursor of the previous page'),
    q: z
      .string()
      .trim()
      .min(1)
      .max(MAX_SEARCH_LENGTH)
      .optional()
      .describe('Case-insensitive substring of the url, user id, email or name, release or environment'),
    hasErrors: booleanParameter.optional().describe('true: sessions with at least one error; false: none'),
    browser: textParameter().optional().describe('Browser name, case-insensitive (e.g. Chrome)'),
    os: textParameter().optional().describe('OS name, case-insensitive (e.g. macOS)'),
    device: deviceClassSchema.optional().describe('desktop | mobile | tablet'),
    level: severitySchema
      .optional()
      .describe(
        'Sessions whose level (highest severity of their signals) is at least this: critical > high > medium > low > info',
      ),
    hasGaps: booleanParameter
      .optional()
      .describe('true: sessions with missing sequence numbers or SDK-reported gaps; false: neither'),
    minDurationSec: numberParameter(MAX_DURATION_SECONDS)
      .optional()
      .describe('Duration at least, in seconds'),
    maxDurationSec: numberParameter(MAX_DURATION_SECONDS).optional().describe('Duration at most, in seconds'),
    from: timeParameter.optional().describe('Started at or after: ISO 8601 or epoch milliseconds'),
    to: timeParameter.optional().describe('Started before: ISO 8601 or epoch milliseconds'),
    user: textParameter().optional().describe('Exact user id or email'),
    urlContains: z
      .string()
      .min(1)
      .max(MAX_SEARCH_LENGTH)
      .optional()
      .describe('Case-insensitive substring of the session url'),
    environment: textParameter().optional().describe('Exact environment'),
    release: textParameter().optional().describe('Exact release'),
  })
  .check((context) => {
    checkTimeRange(context);
    const { minDurationSec, maxDurationSec } = context.value;
    if (minDurationSec !== undefined && maxDurationSec !== undefined && minDurationSec > maxDurationSec) {
      context.issues.push({
        code: 'custom',
        message: '`maxDurationSec` must be at least `minDurationSec`',
        path: ['maxDurationSec'],
        input: context.value,
      });
    }
  });
export type SessionListQuery = z.output<typeof sessionListQuerySchema>;

/** The repository's filters from a validated query. */
export function toSessionFilters(query: SessionListQuery): SessionFilters {
  return {
    q: query.q,
    hasErrors: query.hasErrors,
    browser: query.browser,
    os: query.os,
    device: query.device,
    level: query.level,
    hasGaps: query.hasGaps,
    minDurationMs: query.minDurationSec === undefined ? undefined : Math.ceil(query.minDurationSec * 1000),
    maxDurationMs: query.maxDurationSec === undefined ? undefined : Math.floor(query.maxDurationSec * 1000),
    from: query.from,
    to: query.to,
    user: query.user,
    urlContains: query.urlContains,
    environment: query.environment,
    release: query.release,
  };
}

/** Largest page of events. */
const MAX_EVENTS_LIMIT = 1000;
export const DEFAULT_EVENTS_LIMIT = 100;

const EVENT_TYPE = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,63}$/;

export const eventListQuerySchema = z.strictObject({
  types: z
    .string()
    .max(1024)
    .transform((value, context) => {
      const types = value
        .split(',')
        .map((type) => type.trim())
        .filter((type) => type.length > 0);
      const bad = types.find((type) => !EVENT_TYPE.test(type));
      if (types.length === 0 || types.length > 32 || bad !== undefined) {
        context.addIssue({
          code: 'custom',
          message:
            bad === undefined
              ? 'Expected 1..32 comma-separated event types (e.g. error,nav,call.event)'
              : `Not an event type: ${JSON.stringify(bad.slice(0, 64))}`,
        });
        return z.NEVER;
      }
      return new Set(types);
    })
    .optional()
    .describe('Comma-separated event types to keep (e.g. error,nav,call.event); default: all'),
  limit: integerParameter(1, MAX_EVENTS_LIMIT)
    .optional()
    .describe(`Page size, 1..${MAX_EVENTS_LIMIT} (default ${DEFAULT_EVENTS_LIMIT})`),
  cursor: z.string().max(256).optional().describe('nextCursor of the previous page'),
});

const MAX_ISSUES_LIMIT = 1000;
export const DEFAULT_ISSUES_LIMIT = 100;

export const issueListQuerySchema = z.strictObject({
  limit: integerParameter(1, MAX_ISSUES_LIMIT)
    .optional()
    .describe(`Page size, 1..${MAX_ISSUES_LIMIT} (default ${DEFAULT_ISSUES_LIMIT})`),
  cursor: z.string().max(256).optional().describe('nextCursor of the previous page'),
});

/** `{ expiresInHours }`: a share link lives 1 hour to 30 days. */
const MAX_SHARE_HOURS = 720;
export const shareRequestSchema = z.strictObject({
  expiresInHours: z
    .int()
    .min(1)
    .max(MAX_SHARE_HOURS)
    .describe(`How long the link works, 1..${MAX_SHARE_HOURS} hours`),
});
