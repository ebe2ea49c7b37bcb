import { z } from 'zod';
import { PROTOCOL_LIMITS } from './limits.ts';
import { boundedText, timestampSchema } from './scalars.ts';

const nameAndVersionSchema = z.object({ name: boundedText(), version: boundedText() });

/**
 * A browser or operating system: its `name` is required (`Unknown` when the SDK cannot tell), its
 * `version` optional, since a user agent may carry none (Linux user agents name no OS version).
 */
const platformSchema = z.object({ name: boundedText(), version: boundedText().optional() });

/**
 * An end user as the app identifies them: `id`, optional `email` and `name`. Used by
 * `SessionMeta.user` and the `identify` event.
 *
 * @example
 * ```ts
 * userSchema.parse({ id: 'u_42', email: 'ada@example.com' });
 * ```
 */
export const userSchema = z.object({
  id: boundedText(),
  email: boundedText().optional(),
  name: boundedText().optional(),
});

/**
 * An end user: `{ id, email?, name? }`.
 *
 * @example
 * ```ts
 * const user: User = { id: 'u_42' };
 * ```
 */
export type User = z.infer<typeof userSchema>;

/**
 * The device class of a session: `desktop` | `mobile` | `tablet`.
 *
 * @example
 * ```ts
 * deviceClassSchema.parse('mobile');
 * ```
 */
export const deviceClassSchema = z.enum(['desktop', 'mobile', 'tablet']);

/**
 * The device class of a session.
 *
 * @example
 * ```ts
 * const device: DeviceClass = 'desktop';
 * ```
 */
export type DeviceClass = z.infer<typeof deviceClassSchema>;

/**
 * Session metadata (PROTOCOL.md §1), required on the chunk with `seq = 0`. `recording.mode` is
 * a short lowercase word (`always`, `conditional`, ...): the set of modes belongs to the SDK
 * options and may grow, so any such word is accepted. The optional fields are those of
 * {@link OPTIONAL_META_FIELDS}; this schema is what a sender must send, while `parseChunk` reads
 * them tolerantly (an empty or malformed optional field is dropped, not fatal).
 *
 * @example
 * ```ts
 * import { sessionMetaSchema } from '@svc/protocol';
 *
 * const meta = sessionMetaSchema.parse({
 *   sdk: { name: '@svc/browser-sdk', version: '0.2.0' },
 *   startedAt: 1763700000000,
 *   url: 'https://app.example.com/call/42',
 *   userAgent: navigator.userAgent,
 *   browser: { name: 'Chrome', version: '156.0.0.0' },
 *   os: { name: 'Linux', version: 'x86_64' },
 *   device: 'desktop',
 *   viewport: { w: 1280, h: 720 },
 *   recording: { mode: 'always' },
 * });
 * ```
 */
export const sessionMetaSchema = z.object({
  sdk: nameAndVersionSchema,
  startedAt: timestampSchema,
  url: boundedText(PROTOCOL_LIMITS.maxUrlLength),
  referrer: boundedText(PROTOCOL_LIMITS.maxUrlLength).optional(),
  userAgent: boundedText(PROTOCOL_LIMITS.maxUserAgentLength),
  browser: platformSchema,
  os: platformSchema,
  device: deviceClassSchema,
  viewport: z.object({
    w: z.int().min(0).max(PROTOCOL_LIMITS.maxDimension),
    h: z.int().min(0).max(PROTOCOL_LIMITS.maxDimension),
  }),
  release: boundedText().optional(),
  environment: boundedText().optional(),
  user: userSchema.optional(),
  recording: z.object({ mode: z.string().regex(/^[a-z][a-z0-9_-]{0,63}$/) }),
});

/**
 * Session metadata sent with the first chunk of a session.
 *
 * @example
 * ```ts
 * function describe(meta: SessionMeta): string {
 *   return `${meta.browser.name} ${meta.browser.version} on ${meta.os.name}`;
 * }
 * ```
 */
export type SessionMeta = z.infer<typeof sessionMetaSchema>;
