import { decodedMappings, TraceMap } from '@jridgewell/trace-mapping';

// What an uploaded file is: a bundle (its `//# debugId=` comment) or a source map (validated,
// its `debugId`). Pure functions: they return results, the routes turn refusals into 400s.

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const MAPPINGS = /^[A-Za-z0-9+/,;]*$/;
const DEBUG_ID_COMMENT = /\/\/# debugId=([0-9a-fA-F-]{36})[ \t]*(?:\r?\n|$)/g;

/**
 * The debug id of a bundle (the last `//# debugId=<uuid>` comment, lowercase), if any.
 *
 * @example
 * ```ts
 * bundleDebugId('x();\n//# debugId=85314830-023F-4CF1-A267-535F4E37BB17\n'); // '85314830-023f-4cf1-a267-535f4e37bb17'
 * ```
 */
export function bundleDebugId(source: string): string | undefined {
  let found: string | undefined;
  for (const match of source.matchAll(DEBUG_ID_COMMENT)) {
    if (UUID.test(match[1] as string)) found = (match[1] as string).toLowerCase();
  }
  return found;
}

/** Why a source map was refused. */
type MapRefusal = 'not_json' | 'not_version_3' | 'no_mappings' | 'no_sources' | 'bad_debug_id' | 'unparsable';

export type MapCheck =
  | { ok: true; map: TraceMap; debugId?: string }
  | { ok: false; reason: MapRefusal; message: string };

/**
 * Checks a source map the way symbolication will read it: JSON, version 3, a `mappings` string,
 * a `sources` array, an optional `debugId` (or `debug_id`) UUID, and mappings that
 * `@jridgewell/trace-mapping` decodes.
 *
 * @example
 * ```ts
 * checkSourceMap('{"version":3,"sources":["a.ts"],"names":[],"mappings":"AAAA"}').ok; // true
 * checkSourceMap('nope'); // { ok: false, reason: 'not_json', ... }
 * ```
 */
export function checkSourceMap(text: string): MapCheck {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return { ok: false, reason: 'not_json', message: 'is not JSON' };
  }
  if (typeof json !== 'object' || json === null || Array.isArray(json))
    return { ok: false, reason: 'not_json', message: 'is not a JSON object' };
  const fields = json as Record<string, unknown>;
  if (fields.version !== 3)
    return { ok: false, reason: 'not_version_3', message: 'is not a version 3 source map' };
  if (typeof fields.mappings !== 'string')
    return { ok: false, reason: 'no_mappings', message: 'has no "mappings" string' };
  if (!Array.isArray(fields.sources))
    return { ok: false, reason: 'no_sources', message: 'has no "sources" array' };
  const rawDebugId = fields.debugId ?? fields.debug_id;
  if (rawDebugId !== undefined && (typeof rawDebugId !== 'string' || !UUID.test(rawDebugId)))
    return { ok: false, reason: 'bad_debug_id', message: 'has a "debugId" that is not a UUID' };
  if (!MAPPINGS.test(fields.mappings))
    return { ok: false, reason: 'unparsable', message: 'has "mappings" that are not Base64 VLQ' };
  try {
    const map = new TraceMap(fields as unknown as ConstructorParameters<typeof TraceMap>[0]);
    const sources = fields.sources.length;
    const names = Array.isArray(fields.names) ? fields.names.length : 0;
    for (const line of decodedMappings(map)) {
      for (const segment of line) {
        if (segment.length >= 4 && ((segment[1] as number) >= sources || (segment[1] as number) < 0))
          return { ok: false, reason: 'unparsable', message: 'has mappings that point past its "sources"' };
        if (segment.length === 5 && ((segment[4] as number) >= names || (segment[4] as number) < 0))
          return { ok: false, reason: 'unparsable', message: 'has mappings that point past its "names"' };
      }
    }
    return {
      ok: true,
      map,
      ...(typeof rawDebugId === 'string' ? { debugId: rawDebugId.toLowerCase() } : {}),
    };
  } catch (error) {
    return { ok: false, reason: 'unparsable', message: `cannot be read (${(error as Error).message})` };
  }
}

/**
 * The stored URL of a file: the upload's prefix joined with its name (`~/static/js/` +
 * `main.js`), or undefined for a name that is not a plain relative path.
 *
 * @example
 * ```ts
 * fileUrl('~/static/js/', 'main.js'); // '~/static/js/main.js'
 * fileUrl('~/', '../etc/passwd'); // undefined
 * ```
 */
export function fileUrl(prefix: string, name: string): string | undefined {
  if (
    name === '' ||
    name.length > 512 ||
    name.startsWith('/') ||
    name.split('/').some((part) => part === '..' || part === '.' || part === '')
  )
    return undefined;
  if (!/^[\w.\-/@+~]+$/.test(name)) return undefined;
  return `${prefix.endsWith('/') ? prefix : `${prefix}/`}${name}`;
}

/**
 * The stored URLs a frame's script URL may have been uploaded as: itself (without query and
 * fragment) and `~` + its path (any origin).
 *
 * @example
 * ```ts
 * candidateUrls('https://shop.example.com/static/js/main.js?v=2'); // ['https://shop.example.com/static/js/main.js', '~/static/js/main.js']
 * ```
 */
export function candidateUrls(file: string): string[] {
  const bare = file.replace(/[?#].*$/, '');
  try {
    const url = new URL(bare);
    return [bare, `~${url.pathname}`];
  } catch {
    return bare.startsWith('/') ? [bare, `~${bare}`] : [bare];
  }
}
