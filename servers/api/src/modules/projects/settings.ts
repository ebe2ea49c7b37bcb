import { thresholdOverridesSchema } from '@svc/detectors/thresholds-schema';
import { z } from 'zod';

const originSchema = z
  .string()
  .max(2048)
  .refine(
    (value) => {
      if (value === '*') return false;
      if (!URL.canParse(value)) return false;
      const url = new URL(value);
      return (url.protocol === 'https:' || url.protocol === 'http:') && url.origin === value;
    },
    { message: 'must be an origin such as https://app.example.com (scheme, host and port only, no path)' },
  );

const triggerNameSchema = z.string().min(1).max(128);

const webrtcSettingsSchema = z.strictObject({
  /** Loads the SDK's lazy WebRTC collector. */
  enabled: z.boolean(),
  sampleIntervalSec: z.int().min(1).max(300),
  captureSdp: z.boolean(),
  emitOnThresholdCross: z.boolean(),
  maxPeerConnections: z.int().min(1).max(64),
});

const recordingSettingsSchema = z.strictObject({
  /** `always` keeps every session; `conditional` keeps a session only when a trigger fires. */
  mode: z.enum(['always', 'conditional']),
  triggers: z.array(triggerNameSchema).max(100),
  monitorModeAfterMinutes: z
    .int()
    .min(1)
    .max(24 * 60)
    .nullable(),
  monitorTriggers: z.array(triggerNameSchema).max(100),
});

const privacySettingsSchema = z.strictObject({
  /** `strict` masks all text and inputs and never captures SDP. */
  mode: z.enum(['standard', 'strict']),
  /**
   * Query parameters (by name) a `request` event's URL may keep: ingest removes every other one,
   * and the fragment (server-side: the browser SDK's `networkQueryParams` says what it sends).
   */
  requestQueryParams: z
    .array(
      z
        .string()
        .regex(/^[\w.~[\]-]{1,64}$/, 'a query parameter name: letters, digits, _ . ~ - [ ], at most 64'),
    )
    .max(50),
});

const ingestSettingsSchema = z.strictObject({
  /**
   * Chunks a second the project may send to each server process, with bursts of up to twice that;
   * more are answered 429 with `Retry-After`. `null`: no limit.
   */
  maxChunksPerSecond: z.int().min(1).max(1_000_000).nullable(),
});

const callSettingsSchema = z.strictObject({
  /**
   * A call with no `pc_closed` is closed once its session has sent nothing about it for this long
   * (seconds; SDKs emit a sample at least every 30 s while a call is tracked).
   */
  inactivityTimeoutSec: z
    .int()
    .min(30)
    .max(24 * 3600),
  /**
   * Days a call's rows (its series, tracks, items and findings) are kept after it started, then
   * deleted; never longer than its session (servers/api/README.md, Retention).
   */
  retentionDays: z.int().min(1).max(3650),
});

const sessionSettingsSchema = z.strictObject({
  /**
   * Days a session is kept after it started, then deleted everywhere (chunks and blobs, calls,
   * signals, facts, occurrences); the plan's limit applies when lower (servers/api/README.md, Retention).
   */
  retentionDays: z.int().min(1).max(3650),
});

/** A route pattern: a path whose `:name` segments match any one segment (`/docs/:slug`). */
const routePatternSchema = z
  .string()
  .min(1)
  .max(512)
  .regex(/^\/[^?#\s]*$/, { message: 'must be a path such as /docs/:slug (no query, hash or spaces)' });

const insightSettingsSchema = z.strictObject({
  /**
   * Route patterns that name page views' routes before id-like segments are replaced (first match
   * wins): `/docs/:slug` makes `/docs/getting-started` the route `/docs/:slug`.
   */
  routePatterns: z.array(routePatternSchema).max(200),
});

const traceSettingsSchema = z.strictObject({
  /** Days spans and log records sent over OTLP are kept (whole UTC days), then deleted. */
  retentionDays: z.int().min(1).max(365),
});

const assetSettingsSchema = z.strictObject({
  /** Also archive the fonts that archived stylesheets reference (`url()` in `@font-face`). */
  archiveFonts: z.boolean(),
  /** Also archive images: `<img src>` in snapshots and the other `url()`s of archived stylesheets. */
  archiveImages: z.boolean(),
});

/**
 * A project's settings: what the SDK receives from `GET /v1/config` (collector switch and
 * options, recording mode and triggers, privacy strictness, detector thresholds) and which
 * browser origins may ingest. Stored as JSON on the project row, always complete.
 */
export const projectSettingsSchema = z.strictObject({
  webrtc: webrtcSettingsSchema,
  recording: recordingSettingsSchema,
  privacy: privacySettingsSchema,
  /** Overrides of the detectors' DEFAULT_THRESHOLDS (validated and bounded by @svc/detectors). */
  detectorThresholds: thresholdOverridesSchema,
  /** Browser origins allowed to ingest; empty allows any origin (project keys are public anyway). */
  allowedOrigins: z.array(originSchema).max(100),
  /** Server-side ingest limits (not sent to SDKs). */
  ingest: ingestSettingsSchema,
  /** Server-side call processing and how long calls are kept (not sent to SDKs). */
  calls: callSettingsSchema,
  /** Server-side: how long sessions are kept (not sent to SDKs). */
  sessions: sessionSettingsSchema,
  /** Server-side insights: how page views are named (not sent to SDKs). */
  insights: insightSettingsSchema,
  /** Server-side OpenTelemetry data: how long it is kept (not sent to SDKs). */
  traces: traceSettingsSchema,
  /** Server-side archiving of replays' stylesheets, fonts and images (not sent to SDKs). */
  assets: assetSettingsSchema,
});

export type ProjectSettings = z.infer<typeof projectSettingsSchema>;

/** The settings of a new project. */
export const DEFAULT_PROJECT_SETTINGS: ProjectSettings = {
  webrtc: {
    enabled: false,
    sampleIntervalSec: 5,
    captureSdp: false,
    emitOnThresholdCross: true,
    maxPeerConnections: 8,
  },
  recording: { mode: 'always', triggers: [], monitorModeAfterMinutes: null, monitorTriggers: [] },
  privacy: { mode: 'standard', requestQueryParams: [] },
  detectorThresholds: {},
  allowedOrigins: [],
  ingest: { maxChunksPerSecond: null },
  calls: { inactivityTimeoutSec: 120, retentionDays: 90 },
  sessions: { retentionDays: 90 },
  insights: { routePatterns: [] },
  traces: { retentionDays: 14 },
  assets: { archiveFonts: false, archiveImages: false },
};

/**
 * The body of `PATCH /v1/projects/{id}`: any group, and any field within a group, may be left
 * out; `detectorThresholds` and `allowedOrigins` are replaced as a whole when given.
 */
export const projectSettingsPatchSchema = z.strictObject({
  webrtc: webrtcSettingsSchema.partial().optional(),
  recording: recordingSettingsSchema.partial().optional(),
  privacy: privacySettingsSchema.partial().optional(),
  detectorThresholds: thresholdOverridesSchema.optional(),
  allowedOrigins: z.array(originSchema).max(100).optional(),
  ingest: ingestSettingsSchema.partial().optional(),
  calls: callSettingsSchema.partial().optional(),
  sessions: sessionSettingsSchema.partial().optional(),
  insights: insightSettingsSchema.partial().optional(),
  traces: traceSettingsSchema.partial().optional(),
  assets: assetSettingsSchema.partial().optional(),
});

export type ProjectSettingsPatch = z.infer<typeof projectSettingsPatchSchema>;

/** Applies a patch to complete settings; the result is validated again. */
export function applySettingsPatch(settings: ProjectSettings, patch: ProjectSettingsPatch): ProjectSettings {
  return projectSettingsSchema.parse({
    webrtc: { ...settings.webrtc, ...patch.webrtc },
    recording: { ...settings.recording, ...patch.recording },
    privacy: { ...settings.privacy, ...patch.privacy },
    detectorThresholds: patch.detectorThresholds ?? settings.detectorThresholds,
    allowedOrigins: patch.allowedOrigins ?? settings.allowedOrigins,
    ingest: { ...settings.ingest, ...patch.ingest },
    calls: { ...settings.calls, ...patch.calls },
    sessions: { ...settings.sessions, ...patch.sessions },
    insights: { ...settings.insights, ...patch.insights },
    traces: { ...settings.traces, ...patch.traces },
    assets: { ...settings.assets, ...patch.assets },
  });
}

/**
 * Reads stored settings, filling what an older version of the server did not store yet. A row
 * that no longer validates falls back to the defaults group by group, never failing a request.
 * The result is read-only: it is shared by every reader of the same stored object.
 */
export function readSettings(stored: unknown): ProjectSettings {
  // Ingest reads the settings of a cached project row on every chunk: parse each stored object
  // once. The result is shared, so callers treat it as read-only.
  if (typeof stored === 'object' && stored !== null) {
    let settings = parsed.get(stored);
    if (settings === undefined) {
      settings = parseSettings(stored as Record<string, unknown>);
      parsed.set(stored, settings);
    }
    return settings;
  }
  return parseSettings({});
}

const parsed = new WeakMap<object, ProjectSettings>();

/** Settings by their JSON text, for {@link readSettingsText}; cleared when it holds this many. */
const parsedTexts = new Map<string, ProjectSettings>();
const MAX_PARSED_TEXTS = 1_000;

/**
 * {@link readSettings} of settings read as JSON text (`null`: none stored), parsed and validated
 * once per distinct text: a reader that gets a new row for every call (the call worker, once per
 * job) does not validate them again each time. The result is read-only.
 *
 * @example
 * ```ts
 * const settings = readSettingsText('{"calls":{"inactivityTimeoutSec":60}}');
 * settings.calls.inactivityTimeoutSec; // 60
 * ```
 */
export function readSettingsText(text: string | null): ProjectSettings {
  const key = text ?? 'null';
  let settings = parsedTexts.get(key);
  if (settings === undefined) {
    settings = readSettings(JSON.parse(key));
    if (parsedTexts.size >= MAX_PARSED_TEXTS) parsedTexts.clear();
    parsedTexts.set(key, settings);
  }
  return settings;
}

function parseSettings(value: Record<string, unknown>): ProjectSettings {
  const group = <Key extends keyof ProjectSettings>(key: Key, schema: z.ZodType<ProjectSettings[Key]>) => {
    const merged =
      typeof DEFAULT_PROJECT_SETTINGS[key] === 'object' && !Array.isArray(DEFAULT_PROJECT_SETTINGS[key])
        ? { ...(DEFAULT_PROJECT_SETTINGS[key] as object), ...((value[key] as object | undefined) ?? {}) }
        : (value[key] ?? DEFAULT_PROJECT_SETTINGS[key]);
    const result = schema.safeParse(merged);
    return result.success ? result.data : DEFAULT_PROJECT_SETTINGS[key];
  };
  return {
    webrtc: group('webrtc', webrtcSettingsSchema),
    recording: group('recording', recordingSettingsSchema),
    privacy: group('privacy', privacySettingsSchema),
    detectorThresholds: group('detectorThresholds', thresholdOverridesSchema),
    allowedOrigins: group('allowedOrigins', z.array(originSchema).max(100)),
    ingest: group('ingest', ingestSettingsSchema),
    calls: group('calls', callSettingsSchema),
    sessions: group('sessions', sessionSettingsSchema),
    insights: group('insights', insightSettingsSchema),
    traces: group('traces', traceSettingsSchema),
    assets: group('assets', assetSettingsSchema),
  };
}
