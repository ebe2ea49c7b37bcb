import { createHash } from 'node:crypto';

// Debug ids (the TC39 proposal "Source Map Debug ID", as Sentry and the bundler plugins use
// them): one UUID shared by a bundle (its `//# debugId=<uuid>` comment) and its source map (its
// `debugId` field), so the server finds the map of the exact build that threw, whatever URL or
// release it was served under. Pure functions: they return results instead of throwing.

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
// As the server reads it (servers/api, sourcemaps/files.ts): the comment ends its line.
const DEBUG_ID_COMMENT = /\/\/# debugId=([0-9a-fA-F-]{36})[ \t]*(?:\r?\n|$)/g;
// The last `//# sourceMappingURL=` comment, when it is the bundle's last line.
const SOURCE_MAPPING_URL = /(?:^|\n)(\/\/[#@] sourceMappingURL=[^\r\n]*)\s*$/;

/**
 * The debug id of a build: a UUID derived from the SHA-256 of the bundle's code and of its
 * source map (RFC 9562 UUIDv8, the name-based SHA-256 layout of its appendix B.2), so the same
 * build always gets the same id and any change of code or map gets another.
 *
 * @example
 * ```ts
 * createDebugId('console.log(1);\n', '{"version":3,...}'); // '3b7f0c2e-...-8...-...' (the same for the same inputs)
 * ```
 */
export function createDebugId(code: string, map?: string): string {
  const hash = createHash('sha256');
  hash.update(code);
  // A separator that cannot be confused with the code's own bytes, then the map.
  hash.update('\0');
  if (map !== undefined) hash.update(map);
  const bytes = hash.digest().subarray(0, 16);
  bytes[6] = ((bytes[6] as number) & 0x0f) | 0x80; // version 8
  bytes[8] = ((bytes[8] as number) & 0x3f) | 0x80; // variant 10
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/**
 * The debug id a bundle carries (its last `//# debugId=<uuid>` comment, lowercase), if any.
 *
 * @example
 * ```ts
 * readDebugId('x();\n//# debugId=85314830-023F-4CF1-A267-535F4E37BB17\n'); // '85314830-023f-4cf1-a267-535f4e37bb17'
 * readDebugId('x();\n'); // undefined
 * ```
 */
export function readDebugId(code: string): string | undefined {
  let found: string | undefined;
  for (const match of code.matchAll(DEBUG_ID_COMMENT)) {
    if (UUID.test(match[1] as string)) found = (match[1] as string).toLowerCase();
  }
  return found;
}

/**
 * The relative path or URL of a bundle's `//# sourceMappingURL=` comment (its last line), if any;
 * `data:` URLs (inline maps) included.
 *
 * @example
 * ```ts
 * sourceMappingUrl('x();\n//# sourceMappingURL=main.js.map'); // 'main.js.map'
 * ```
 */
export function sourceMappingUrl(code: string): string | undefined {
  const match = SOURCE_MAPPING_URL.exec(code);
  return match === null ? undefined : (match[1] as string).replace(/^\/\/[#@] sourceMappingURL=/, '').trim();
}

/** A bundle and its map with a debug id in both; `changed` says whether either was rewritten. */
export type InjectResult =
  | { ok: true; debugId: string; code: string; map?: string; changed: boolean }
  | { ok: false; reason: 'invalid_map'; message: string };

/**
 * Gives a bundle and its source map one debug id: the `//# debugId=<id>` comment goes on its
 * own line before the `//# sourceMappingURL=` line (or at the end), and `debugId` into the map.
 * A bundle that already carries an id keeps it (whoever injected it) and its map gets that id,
 * so injecting twice changes nothing. Lines before the comment are untouched: the map's
 * mappings stay valid.
 *
 * @example
 * ```ts
 * const result = injectDebugId('x();\n//# sourceMappingURL=main.js.map', '{"version":3,"sources":[],"mappings":""}');
 * if (result.ok) result.code; // 'x();\n//# debugId=<id>\n//# sourceMappingURL=main.js.map'
 * ```
 */
export function injectDebugId(code: string, map?: string): InjectResult {
  let parsed: Record<string, unknown> | undefined;
  if (map !== undefined) {
    try {
      const json: unknown = JSON.parse(map);
      if (typeof json !== 'object' || json === null || Array.isArray(json))
        return { ok: false, reason: 'invalid_map', message: 'is not a JSON object' };
      parsed = json as Record<string, unknown>;
    } catch {
      return { ok: false, reason: 'invalid_map', message: 'is not JSON' };
    }
  }
  const existing = readDebugId(code);
  const debugId = existing ?? createDebugId(code, map);
  const newCode = existing === undefined ? withDebugIdComment(code, debugId) : code;
  let newMap = map;
  if (parsed !== undefined) {
    const current = parsed.debugId ?? parsed.debug_id;
    const consistent =
      typeof current === 'string' &&
      current.toLowerCase() === debugId &&
      (parsed.debug_id === undefined || parsed.debug_id === parsed.debugId);
    if (!consistent) {
      const { debug_id: _legacy, ...rest } = parsed;
      newMap = JSON.stringify({ ...rest, debugId });
    }
  }
  return {
    ok: true,
    debugId,
    code: newCode,
    ...(newMap === undefined ? {} : { map: newMap }),
    changed: newCode !== code || newMap !== map,
  };
}

function withDebugIdComment(code: string, debugId: string): string {
  const comment = `//# debugId=${debugId}\n`;
  const match = SOURCE_MAPPING_URL.exec(code);
  if (match !== null) {
    const at = match.index + (match[0].startsWith('\n') ? 1 : 0);
    return `${code.slice(0, at)}${comment}${code.slice(at)}`;
  }
  return `${code}${code === '' || code.endsWith('\n') ? '' : '\n'}${comment}`;
}
