import { isIP } from 'node:net';
import { resolve } from 'node:path';
import { z } from 'zod';
import { type AllowedHosts, parseAllowedHosts } from './http/destination-policy.ts';

/**
 * Where relational data lives: the embedded PGlite store in the data directory (the default,
 * no services to install), or PostgreSQL when `DATABASE_URL` is set.
 */
export type DatabaseConfiguration =
  | { engine: 'pglite'; directory: string }
  | { engine: 'postgres'; url: string; poolSize: number };

/** Where chunk blobs live: files under the data directory (default), or S3-compatible storage. */
type BlobStoreConfiguration =
  | { kind: 'file'; directory: string }
  | {
      kind: 's3';
      bucket: string;
      region: string;
      endpoint?: string;
      accessKeyId?: string;
      secretAccessKey?: string;
      forcePathStyle: boolean;
      prefix?: string;
    };

/** The server's settings, read once from the environment at start-up. */
export interface Configuration {
  host: string;
  port: number;
  dataDirectory: string;
  publicUrl: string;
  /** Base64 of 32 bytes; when absent, a key file in the data directory is created and reused. */
  masterKey?: string;
  /** `SVC_MASTER_KEY_PREVIOUS`: keys being rotated out, base64, separated by commas or spaces. */
  previousMasterKeys?: string;
  database: DatabaseConfiguration;
  blobStore: BlobStoreConfiguration;
  logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
  /**
   * `SVC_CALL_WORKER`: this process runs call processing jobs and session facts jobs in the
   * background (default true).
   * Turn it off on API-only processes when separate processes run the workers.
   */
  callWorker: boolean;
  /**
   * `SVC_CALL_COALESCE_MS`: after a session's call job ran, its next job waits this long (ms) so
   * that the chunks arriving meanwhile are processed as one job (default 500: a burst of chunks,
   * such as an SDK sending what it queued while offline, becomes one job, while chunks at an SDK's
   * pace, seconds apart, are each processed at once). 0 turns it off.
   */
  callCoalesceMs: number;
  /**
   * `SVC_DELIVERY_WORKER`: this process delivers webhooks in the background (default true). Any
   * number of processes on one PostgreSQL may.
   */
  deliveryWorker: boolean;
  /**
   * `SVC_REGRESSION_WORKER`: this process checks every project for release and web vital
   * regressions every 10 minutes (default true). Any number of processes may: each regression
   * fires once.
   */
  regressionWorker: boolean;
  /**
   * `SVC_RETENTION_WORKER`: this process deletes data past its project's retention (spans and
   * log records: `traces.retentionDays`) every hour, in bounded batches (default true). Any
   * number of processes may.
   */
  retentionWorker: boolean;
  /**
   * `SVC_USAGE_WORKER`: this process checks every organization's monthly caps each minute and
   * sends `usage.threshold` at 80 % and 100 % (default true). Any number of processes may: each
   * threshold is sent once.
   */
  usageWorker: boolean;
  /** `SVC_APP_URL`: the dashboard's base URL in notification links (default: `publicUrl`). */
  appUrl: string;
  /**
   * `SVC_WEBHOOK_ALLOWED_HOSTS`: hosts, addresses and CIDRs webhooks may reach although they are
   * private, loopback or link-local (comma-separated). Empty: none.
   */
  webhookAllowedHosts: AllowedHosts;
  /**
   * `SVC_DNS_SERVERS`: the DNS servers that verify claimed domains' TXT records
   * (comma-separated `address` or `address:port`, `[v6]:port`). Default: the system's resolvers.
   */
  dnsServers?: string[];
  /**
   * `SVC_SMTP_URL`: where e-mail goes (`smtp://user:password@host:587`, `smtps://…:465`). Absent:
   * each message is written as an `.eml` file under `<dataDirectory>/mail/` and its link logged.
   */
  smtpUrl?: string;
  /** `SVC_MAIL_FROM`: the sender of e-mail, `address` or `Name <address>` (default: see platform/mail). */
  mailFrom?: string;
  /**
   * `SVC_OWNER_EMAIL`: the address of the owner account the embedded server's first start creates
   * (default: see orgs' `DEFAULT_OWNER_EMAIL`).
   */
  ownerEmail?: string;
  /**
   * The model of the AI features, an OpenAI-compatible endpoint (OpenAI, vLLM, Ollama, llama.cpp
   * server): `SVC_AI_BASE_URL` (`https://api.openai.com/v1`, `http://127.0.0.1:11434/v1`),
   * `SVC_AI_MODEL` and `SVC_AI_API_KEY` (optional: local servers need none). Absent: no model, and
   * every AI endpoint answers its deterministic result. Each organization turns it on in its AI
   * settings.
   */
  ai?: { baseUrl: string; model: string; apiKey?: string };
  /**
   * Stripe billing (`SVC_STRIPE_SECRET_KEY`, `SVC_STRIPE_WEBHOOK_SECRET`, `SVC_STRIPE_PRICES`,
   * `SVC_STRIPE_METER_EVENTS`, `SVC_STRIPE_API_BASE`). Absent: no billing provider (`none`), each
   * organization's plan comes from the deployment's license. The billing module checks the plan
   * names.
   */
  stripe?: StripeConfiguration;
}

/** The Stripe settings: secrets never leave the process (see {@link describeConfiguration}). */
export interface StripeConfiguration {
  /** `sk_…` or a restricted `rk_…` key. */
  secretKey: string;
  /** `whsec_…`: the webhook endpoint's signing secret. */
  webhookSecret: string;
  /** Price id (`price_…`) by plan name, from `SVC_STRIPE_PRICES=team:price_1,business:price_2`. */
  prices: Record<string, string>;
  /** Meter event name by usage metric, from `SVC_STRIPE_METER_EVENTS=sessions:svc_sessions`. */
  meterEvents: Record<string, string>;
  /** Where Stripe's API answers (default `https://api.stripe.com`; a proxy or a test stand-in). */
  apiBase: string;
}

const configurationErrorMarker = Symbol.for('@svc/api.ConfigurationError');

/**
 * Thrown by {@link loadConfiguration}: one line per bad setting, each naming the variable. The
 * message is made from `problems` (`Invalid configuration:` and one `  - ` line each).
 *
 * @example
 * ```ts
 * throw new ConfigurationError({ problems: ['S3_ACCESS_KEY_ID and S3_SECRET_ACCESS_KEY: give both or neither'] });
 * ```
 */
export class ConfigurationError extends Error {
  /** Marks instances for {@link ConfigurationError.isInstance}, across copies of the module. */
  readonly [configurationErrorMarker] = true;
  /** One line per bad setting, each starting with the variable's name. */
  readonly problems: string[];

  constructor({ problems, cause }: { problems: string[]; cause?: unknown }) {
    super(
      `Invalid configuration:\n${problems.map((problem) => `  - ${problem}`).join('\n')}`,
      cause === undefined ? undefined : { cause },
    );
    this.name = 'ConfigurationError';
    this.problems = problems;
  }

  /** Whether `value` is a ConfigurationError (also one made by another copy of this module). */
  static isInstance(value: unknown): value is ConfigurationError {
    return (
      typeof value === 'object' &&
      value !== null &&
      (value as { [configurationErrorMarker]?: unknown })[configurationErrorMarker] === true
    );
  }
}

/** `SVC_CALL_COALESCE_MS` when unset. */
const DEFAULT_CALL_COALESCE_MS = 500;

const optionalText = z
  .string()
  .transform((value) => value.trim())
  .pipe(z.string())
  .optional()
  .transform((value) => (value === '' ? undefined : value));

const booleanText = z
  .enum(['true', 'false', '1', '0'], { error: 'must be true or false' })
  .transform((value) => value === 'true' || value === '1');

const environmentSchema = z.object({
  HOST: optionalText.default('127.0.0.1'),
  PORT: optionalText
    .default('8080')
    .transform(Number)
    .pipe(
      z
        .number({ error: 'must be a port number' })
        .int('must be a whole number')
        .min(0, 'must be 0..65535')
        .max(65_535, 'must be 0..65535'),
    ),
  SVC_DATA_DIR: optionalText.default('./data'),
  SVC_PUBLIC_URL: optionalText.pipe(
    z
      .url({
        protocol: /^https?$/,
        error: 'must be an absolute http(s) URL, e.g. https://replay.example.com',
      })
      .optional(),
  ),
  SVC_MASTER_KEY: optionalText.pipe(
    z
      .string()
      .refine((value) => isBase64Of32Bytes(value), {
        message: 'must be the base64 of exactly 32 random bytes (generate one: openssl rand -base64 32)',
      })
      .optional(),
  ),
  SVC_MASTER_KEY_PREVIOUS: optionalText.pipe(
    z
      .string()
      .refine(
        (value) =>
          value
            .split(/[\s,]+/)
            .filter((part) => part !== '')
            .every(isBase64Of32Bytes),
        {
          message:
            'must be master keys being rotated out, each the base64 of 32 bytes, separated by commas or spaces',
        },
      )
      .optional(),
  ),
  SVC_CALL_WORKER: optionalText.pipe(booleanText.optional()),
  SVC_CALL_COALESCE_MS: optionalText
    .default(String(DEFAULT_CALL_COALESCE_MS))
    .transform(Number)
    .pipe(
      z
        .number({ error: 'must be a number of milliseconds' })
        .int('must be a whole number of milliseconds')
        .min(0, 'must be 0..60000')
        .max(60_000, 'must be 0..60000'),
    ),
  SVC_DELIVERY_WORKER: optionalText.pipe(booleanText.optional()),
  SVC_REGRESSION_WORKER: optionalText.pipe(booleanText.optional()),
  SVC_RETENTION_WORKER: optionalText.pipe(booleanText.optional()),
  SVC_USAGE_WORKER: optionalText.pipe(booleanText.optional()),
  SVC_APP_URL: optionalText.pipe(
    z
      .url({ protocol: /^https?$/, error: 'must be an absolute http(s) URL, e.g. https://app.example.com' })
      .optional(),
  ),
  SVC_WEBHOOK_ALLOWED_HOSTS: optionalText,
  SVC_DNS_SERVERS: optionalText,
  SVC_SMTP_URL: optionalText.pipe(
    z
      .string()
      .refine(
        (value) => /^smtps?:\/\//.test(value) && URL.canParse(value) && new URL(value).hostname !== '',
        {
          message: 'must be an smtp:// or smtps:// URL, e.g. smtp://user:password@smtp.example.com:587',
        },
      )
      .optional(),
  ),
  SVC_MAIL_FROM: optionalText.pipe(
    z
      .string()
      .refine((value) => isMailbox(value), {
        message: 'must be an e-mail address or "Name <address>", e.g. Replays <no-reply@example.com>',
      })
      .optional(),
  ),
  SVC_OWNER_EMAIL: optionalText.pipe(
    z.email({ message: 'must be an e-mail address, e.g. you@example.com' }).max(254).optional(),
  ),
  SVC_AI_BASE_URL: optionalText.pipe(
    z
      .url({ protocol: /^https?$/, error: 'must be an absolute http(s) URL, e.g. https://api.openai.com/v1' })
      .optional(),
  ),
  SVC_AI_MODEL: optionalText.pipe(z.string().max(200).optional()),
  SVC_AI_API_KEY: optionalText.pipe(z.string().max(4096).optional()),
  SVC_STRIPE_SECRET_KEY: optionalText.pipe(
    z
      .string()
      .regex(/^(sk|rk)_[A-Za-z0-9_]+$/, 'must be a Stripe secret key (sk_…) or restricted key (rk_…)')
      .max(512)
      .optional(),
  ),
  SVC_STRIPE_WEBHOOK_SECRET: optionalText.pipe(
    z
      .string()
      .regex(/^whsec_[A-Za-z0-9+/=_-]+$/, "must be the webhook endpoint's signing secret (whsec_…)")
      .max(512)
      .optional(),
  ),
  SVC_STRIPE_PRICES: optionalText.pipe(
    z
      .string()
      .max(4096)
      .regex(
        /^[a-z]+:price_[A-Za-z0-9_]+(\s*,\s*[a-z]+:price_[A-Za-z0-9_]+)*$/,
        'must be plan:price_id pairs, comma-separated, e.g. team:price_123,business:price_456',
      )
      .optional(),
  ),
  SVC_STRIPE_METER_EVENTS: optionalText.pipe(
    z
      .string()
      .max(4096)
      .regex(
        /^[a-z_]+:[A-Za-z0-9_.-]+(\s*,\s*[a-z_]+:[A-Za-z0-9_.-]+)*$/,
        'must be metric:event_name pairs, comma-separated, e.g. sessions:svc_sessions,ai_tokens:svc_ai_tokens',
      )
      .optional(),
  ),
  SVC_STRIPE_API_BASE: optionalText.pipe(
    z
      .url({ protocol: /^https?$/, error: 'must be an absolute http(s) URL, e.g. https://api.stripe.com' })
      .refine((value) => ['', '/'].includes(new URL(value).pathname) && new URL(value).search === '', {
        message: 'must be a scheme, host and port only, e.g. http://127.0.0.1:12111',
      })
      .optional(),
  ),
  SVC_LOG_LEVEL: optionalText
    .default('info')
    .pipe(z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'])),
  DATABASE_URL: optionalText.pipe(
    z
      .string()
      .refine((value) => /^postgres(ql)?:\/\//.test(value) && URL.canParse(value), {
        message:
          'must be a postgres:// or postgresql:// URL, e.g. postgres://user:password@127.0.0.1:5432/svc',
      })
      .optional(),
  ),
  DATABASE_POOL_SIZE: optionalText
    .default('10')
    .transform(Number)
    .pipe(z.number({ error: 'must be a number' }).int('must be a whole number').min(1).max(200)),
  S3_BUCKET: optionalText,
  S3_REGION: optionalText,
  S3_ENDPOINT: optionalText.pipe(z.url({ protocol: /^https?$/, error: 'must be an http(s) URL' }).optional()),
  S3_ACCESS_KEY_ID: optionalText,
  S3_SECRET_ACCESS_KEY: optionalText,
  S3_FORCE_PATH_STYLE: optionalText.pipe(booleanText.optional()),
  S3_PREFIX: optionalText.pipe(
    z
      .string()
      .regex(
        /^[A-Za-z0-9_.-]+(\/[A-Za-z0-9_.-]+)*$/,
        'must be key segments of letters, digits, _ . - joined by /',
      )
      .optional(),
  ),
});

const ADDRESS = /^[^\s@<>"]+@[^\s@<>"]+\.[^\s@<>"]+$/;

/** `address` or `Name <address>`, without line breaks (it goes into a mail header). */
function isMailbox(value: string): boolean {
  if (/[\r\n]/.test(value)) return false;
  const named = /^([^<>]*)<([^<>]+)>$/.exec(value);
  return ADDRESS.test(named === null ? value : (named[2] as string).trim());
}

function isBase64Of32Bytes(value: string): boolean {
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(value)) return false;
  return Buffer.from(value, 'base64').length === 32;
}

/**
 * Reads and validates the server's settings from environment variables. Collects every problem
 * before failing, so an operator fixes them in one go.
 *
 * @throws {ConfigurationError} with one line per bad variable
 * @example
 * ```ts
 * const configuration = loadConfiguration(process.env);
 * ```
 */
export function loadConfiguration(environment: Record<string, string | undefined>): Configuration {
  const result = environmentSchema.safeParse(environment);
  if (!result.success) {
    throw new ConfigurationError({
      problems: result.error.issues.map(
        (issue) => `${issue.path.join('.') || 'environment'}: ${issue.message}`,
      ),
    });
  }
  const settings = result.data;
  const problems: string[] = [];
  const dataDirectory = resolve(settings.SVC_DATA_DIR);

  const s3Variables = [
    'S3_BUCKET',
    'S3_REGION',
    'S3_ENDPOINT',
    'S3_ACCESS_KEY_ID',
    'S3_SECRET_ACCESS_KEY',
  ] as const;
  const s3Requested = s3Variables.some((name) => settings[name] !== undefined);
  if (s3Requested && settings.S3_BUCKET === undefined) {
    problems.push('S3_BUCKET: required when any S3_* setting is given (it switches blobs to S3 storage)');
  }
  const allowedHosts = parseAllowedHosts(settings.SVC_WEBHOOK_ALLOWED_HOSTS);
  const dnsServers = settings.SVC_DNS_SERVERS?.split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '');
  for (const server of dnsServers ?? []) {
    if (!isDnsServer(server))
      problems.push(
        `SVC_DNS_SERVERS: ${server} is not an IP address with an optional port (1.2.3.4:53, [::1]:53)`,
      );
  }
  for (const problem of allowedHosts.problems) problems.push(`SVC_WEBHOOK_ALLOWED_HOSTS: ${problem}`);
  if ((settings.S3_ACCESS_KEY_ID === undefined) !== (settings.S3_SECRET_ACCESS_KEY === undefined)) {
    problems.push('S3_ACCESS_KEY_ID and S3_SECRET_ACCESS_KEY: give both or neither');
  }
  if ((settings.SVC_AI_BASE_URL === undefined) !== (settings.SVC_AI_MODEL === undefined)) {
    problems.push('SVC_AI_BASE_URL and SVC_AI_MODEL: give both (a model and where it answers) or neither');
  }
  if (settings.SVC_AI_API_KEY !== undefined && settings.SVC_AI_BASE_URL === undefined) {
    problems.push('SVC_AI_API_KEY: set SVC_AI_BASE_URL and SVC_AI_MODEL too');
  }
  const stripeExtras = [
    'SVC_STRIPE_WEBHOOK_SECRET',
    'SVC_STRIPE_PRICES',
    'SVC_STRIPE_METER_EVENTS',
    'SVC_STRIPE_API_BASE',
  ] as const;
  if (settings.SVC_STRIPE_SECRET_KEY === undefined) {
    for (const name of stripeExtras)
      if (settings[name] !== undefined)
        problems.push(`${name}: set SVC_STRIPE_SECRET_KEY too (it turns Stripe billing on)`);
  } else {
    if (settings.SVC_STRIPE_WEBHOOK_SECRET === undefined)
      problems.push(
        'SVC_STRIPE_WEBHOOK_SECRET: required with SVC_STRIPE_SECRET_KEY (the signing secret of the webhook endpoint /v1/billing/stripe/webhook; without it plans never change)',
      );
    if (settings.SVC_STRIPE_PRICES === undefined)
      problems.push(
        'SVC_STRIPE_PRICES: required with SVC_STRIPE_SECRET_KEY, e.g. team:price_123,business:price_456',
      );
  }
  if (problems.length > 0) throw new ConfigurationError({ problems });

  const port = settings.PORT;
  const publicUrl = (settings.SVC_PUBLIC_URL ?? `http://${formatHost(settings.HOST)}:${port}`).replace(
    /\/+$/,
    '',
  );

  const configuration: Configuration = {
    host: settings.HOST,
    port,
    dataDirectory,
    publicUrl,
    database:
      settings.DATABASE_URL === undefined
        ? { engine: 'pglite', directory: resolve(dataDirectory, 'pglite') }
        : { engine: 'postgres', url: settings.DATABASE_URL, poolSize: settings.DATABASE_POOL_SIZE },
    blobStore:
      settings.S3_BUCKET === undefined
        ? { kind: 'file', directory: resolve(dataDirectory, 'blobs') }
        : {
            kind: 's3',
            bucket: settings.S3_BUCKET,
            region: settings.S3_REGION ?? 'us-east-1',
            forcePathStyle: settings.S3_FORCE_PATH_STYLE ?? settings.S3_ENDPOINT !== undefined,
            ...(settings.S3_ENDPOINT === undefined ? {} : { endpoint: settings.S3_ENDPOINT }),
            ...(settings.S3_ACCESS_KEY_ID === undefined ? {} : { accessKeyId: settings.S3_ACCESS_KEY_ID }),
            ...(settings.S3_SECRET_ACCESS_KEY === undefined
              ? {}
              : { secretAccessKey: settings.S3_SECRET_ACCESS_KEY }),
            ...(settings.S3_PREFIX === undefined ? {} : { prefix: settings.S3_PREFIX }),
          },
    logLevel: settings.SVC_LOG_LEVEL,
    callWorker: settings.SVC_CALL_WORKER ?? true,
    callCoalesceMs: settings.SVC_CALL_COALESCE_MS,
    deliveryWorker: settings.SVC_DELIVERY_WORKER ?? true,
    regressionWorker: settings.SVC_REGRESSION_WORKER ?? true,
    retentionWorker: settings.SVC_RETENTION_WORKER ?? true,
    usageWorker: settings.SVC_USAGE_WORKER ?? true,
    appUrl: (settings.SVC_APP_URL ?? publicUrl).replace(/\/+$/, ''),
    webhookAllowedHosts: allowedHosts.allowed,
  };
  if (settings.SVC_MASTER_KEY !== undefined) configuration.masterKey = settings.SVC_MASTER_KEY;
  if (settings.SVC_MASTER_KEY_PREVIOUS !== undefined)
    configuration.previousMasterKeys = settings.SVC_MASTER_KEY_PREVIOUS;
  if (settings.SVC_SMTP_URL !== undefined) configuration.smtpUrl = settings.SVC_SMTP_URL;
  if (dnsServers !== undefined && dnsServers.length > 0) configuration.dnsServers = dnsServers;
  if (settings.SVC_MAIL_FROM !== undefined) configuration.mailFrom = settings.SVC_MAIL_FROM;
  if (settings.SVC_OWNER_EMAIL !== undefined) configuration.ownerEmail = settings.SVC_OWNER_EMAIL;
  if (settings.SVC_AI_BASE_URL !== undefined && settings.SVC_AI_MODEL !== undefined) {
    configuration.ai = {
      baseUrl: settings.SVC_AI_BASE_URL.replace(/\/+$/, ''),
      model: settings.SVC_AI_MODEL,
      ...(settings.SVC_AI_API_KEY === undefined ? {} : { apiKey: settings.SVC_AI_API_KEY }),
    };
  }
  if (
    settings.SVC_STRIPE_SECRET_KEY !== undefined &&
    settings.SVC_STRIPE_WEBHOOK_SECRET !== undefined &&
    settings.SVC_STRIPE_PRICES !== undefined
  ) {
    configuration.stripe = {
      secretKey: settings.SVC_STRIPE_SECRET_KEY,
      webhookSecret: settings.SVC_STRIPE_WEBHOOK_SECRET,
      prices: parsePairs(settings.SVC_STRIPE_PRICES),
      meterEvents: parsePairs(settings.SVC_STRIPE_METER_EVENTS),
      apiBase: (settings.SVC_STRIPE_API_BASE ?? 'https://api.stripe.com').replace(/\/+$/, ''),
    };
  }
  return configuration;
}

/** `a:1, b:2` → `{ a: '1', b: '2' }` (the format was checked by the schema). */
/** `1.2.3.4`, `1.2.3.4:53`, `::1` or `[::1]:53`: what node:dns `setServers` takes. */
function isDnsServer(text: string): boolean {
  const bracketed = /^\[([^\]]+)\](?::(\d{1,5}))?$/.exec(text);
  const withPort = /^([^:]+):(\d{1,5})$/.exec(text);
  const [address, port] = bracketed
    ? [bracketed[1], bracketed[2]]
    : withPort
      ? [withPort[1], withPort[2]]
      : [text, undefined];
  if (address === undefined || isIP(address) === 0) return false;
  return port === undefined || (Number(port) >= 1 && Number(port) <= 65_535);
}

function parsePairs(text: string | undefined): Record<string, string> {
  const pairs: Record<string, string> = {};
  for (const pair of (text ?? '').split(',')) {
    const [name, value] = pair.split(':').map((part) => part.trim());
    if (name !== undefined && name !== '' && value !== undefined) pairs[name] = value;
  }
  return pairs;
}

function formatHost(host: string): string {
  return host.includes(':') ? `[${host}]` : host;
}

/**
 * The configuration with secrets replaced, for logs and the start-up banner.
 *
 * @example
 * ```ts
 * logger.info({ configuration: describeConfiguration(configuration) }, 'starting');
 * ```
 */
export function describeConfiguration(configuration: Configuration): Record<string, unknown> {
  const database =
    configuration.database.engine === 'pglite'
      ? configuration.database
      : { ...configuration.database, url: redactUrl(configuration.database.url) };
  const blobStore =
    configuration.blobStore.kind === 's3' && configuration.blobStore.secretAccessKey !== undefined
      ? { ...configuration.blobStore, secretAccessKey: '[redacted]' }
      : configuration.blobStore;
  return {
    host: configuration.host,
    port: configuration.port,
    dataDirectory: configuration.dataDirectory,
    publicUrl: configuration.publicUrl,
    masterKey:
      configuration.masterKey === undefined ? 'key file in the data directory' : '[from SVC_MASTER_KEY]',
    ...(configuration.previousMasterKeys === undefined
      ? {}
      : { previousMasterKeys: '[from SVC_MASTER_KEY_PREVIOUS]' }),
    database,
    blobStore,
    logLevel: configuration.logLevel,
    callWorker: configuration.callWorker,
    callCoalesceMs: configuration.callCoalesceMs,
    deliveryWorker: configuration.deliveryWorker,
    regressionWorker: configuration.regressionWorker,
    retentionWorker: configuration.retentionWorker,
    usageWorker: configuration.usageWorker,
    appUrl: configuration.appUrl,
    webhookAllowedHosts: configuration.webhookAllowedHosts.text,
    ...(configuration.dnsServers === undefined ? {} : { dnsServers: configuration.dnsServers }),
    ...(configuration.smtpUrl === undefined ? {} : { smtpUrl: redactUrl(configuration.smtpUrl) }),
    ...(configuration.mailFrom === undefined ? {} : { mailFrom: configuration.mailFrom }),
    ...(configuration.ownerEmail === undefined ? {} : { ownerEmail: configuration.ownerEmail }),
    ...(configuration.ai === undefined
      ? {}
      : {
          ai: {
            baseUrl: redactUrl(configuration.ai.baseUrl),
            model: configuration.ai.model,
            ...(configuration.ai.apiKey === undefined ? {} : { apiKey: '[from SVC_AI_API_KEY]' }),
          },
        }),
    ...(configuration.stripe === undefined
      ? {}
      : {
          stripe: {
            secretKey: '[from SVC_STRIPE_SECRET_KEY]',
            webhookSecret: '[from SVC_STRIPE_WEBHOOK_SECRET]',
            prices: configuration.stripe.prices,
            meterEvents: configuration.stripe.meterEvents,
            apiBase: configuration.stripe.apiBase,
          },
        }),
  };
}

function redactUrl(url: string): string {
  const parsed = new URL(url);
  if (parsed.password !== '') parsed.password = 'redacted';
  return parsed.toString();
}
