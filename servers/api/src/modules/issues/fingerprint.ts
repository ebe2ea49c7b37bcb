import { createHash } from 'node:crypto';

/**
 * The bounds of {@link errorIdentity}: whatever the size of its input, it reads at most this
 * much of it, so a 1 MB stack or message costs the same as a small one.
 *
 * @example
 * ```ts
 * ERROR_IDENTITY_LIMITS.maxFrames; // 3: the fingerprint is the name plus the top three frames
 * ```
 */
export const ERROR_IDENTITY_LIMITS = {
  /** Lines of a stack that are read; the frames that matter are at the top. */
  maxStackLines: 50,
  /** A stack line longer than this is not a frame (it is skipped, not cut). */
  maxStackLineLength: 2_000,
  /** Characters of a message or name that are read before any pattern runs. */
  maxTextInput: 2_000,
  /** Length of a normalized message. */
  maxMessageLength: 200,
  /** Length of a title. */
  maxTitleLength: 200,
  /** Length of a normalized name. */
  maxNameLength: 100,
  /** Frames that go into a fingerprint. */
  maxFrames: 3,
  /** Length of a normalized function name, and of a normalized file (its end is kept). */
  maxFramePartLength: 200,
  /** Longest `name: message` header looked for at the start of a stack. */
  maxHeaderLength: 10_000,
} as const;

/** Bumped when the canonical text changes: every fingerprint changes with it. */
const CANONICAL_VERSION = 'error-identity/v1';

/**
 * One frame of a stack as the browser printed it: nothing is dropped or rewritten yet, except
 * the `at ` of a V8 line. `function` is the callee as printed (`async fetchCart`,
 * `Object.<anonymous>`, `promise callback*loadCart`); `file` is the script (a full URL,
 * `<anonymous>`, `[native code]`); `line` and `column` are 1-based when printed. For a frame
 * inside `eval`'d code, `file`, `line` and `column` are where `eval` was called (`column` is
 * absent in Firefox, which does not print it).
 *
 * @example
 * ```ts
 * const frame: StackFrame = {
 *   function: 'handleClick',
 *   file: 'https://shop.example.com/static/js/main.3f9a2b7c.js',
 *   line: 2,
 *   column: 10423,
 * };
 * ```
 */
export interface StackFrame {
  function?: string;
  file?: string;
  line?: number;
  column?: number;
}

/**
 * What clusters an error into an issue: its fingerprint, and the name, frames and title shown
 * for the cluster.
 *
 * @example
 * ```ts
 * const identity: ErrorIdentity = {
 *   fingerprint: '0c1f7d7e4b0a9c2d5e6f708192a3b4c5',
 *   title: "TypeError: Cannot read properties of undefined (reading '<str>')",
 *   frames: ['handleClick@/static/js/main.*.js'],
 *   name: 'TypeError',
 * };
 * ```
 */
export interface ErrorIdentity {
  /** 32 lowercase hex chars: the first 128 bits of SHA-256 (node:crypto) over a canonical text of name + top frames (or name + normalized message when no usable frame). */
  fingerprint: string;
  /** Human title for the cluster, at most 200 chars: `${name}: ${normalized first line of message}`; never contains what normalization removes. */
  title: string;
  /** The normalized frames that went into the fingerprint (at most 3), e.g. `handleClick@/static/js/app.*.js` */
  frames: string[];
  /** The normalized name (e.g. 'TypeError'; 'Error' when absent/blank). */
  name: string;
}

/**
 * The identity of a browser error: what clusters it with the same error in other sessions.
 * Pure and deterministic; the work is bounded by {@link ERROR_IDENTITY_LIMITS}.
 *
 * Design: servers/api/docs/fingerprints.md (how the name, frames, fingerprint and title are built).
 *
 * @example
 * ```ts
 * const identity = errorIdentity({
 *   name: 'TypeError',
 *   message: "Cannot read properties of undefined (reading 'id')",
 *   stack: [
 *     "TypeError: Cannot read properties of undefined (reading 'id')",
 *     '    at handleClick (https://shop.example.com/static/js/main.3f9a2b7c.js:2:10423)',
 *     '    at HTMLButtonElement.callCallback (https://shop.example.com/static/js/main.3f9a2b7c.js:2:88112)',
 *   ].join('\n'),
 * });
 * identity.frames; // ['handleClick@/static/js/main.*.js', 'HTMLButtonElement.callCallback@/static/js/main.*.js']
 * identity.title; // "TypeError: Cannot read properties of undefined (reading '<str>')"
 * identity.fingerprint; // 32 hex chars, the same when the error moves to line 3 of main.9c0d1e2f.js
 * ```
 */
export function errorIdentity(error: {
  name?: string | null;
  message: string;
  stack?: string | null;
  /**
   * The stack's frames already read, top first: the symbolicated ones (original file and
   * function), used instead of `stack`. Frames are normalized as a stack's are.
   */
  frames?: readonly StackFrame[];
}): ErrorIdentity {
  const name = normalizeName(error.name);
  const rawMessage = typeof error.message === 'string' ? error.message : '';
  const message = normalizeMessage(rawMessage);
  const stack = typeof error.stack === 'string' ? withoutHeader(error.stack, error.name, rawMessage) : '';

  const frames: string[] = [];
  for (const frame of error.frames ?? parseStackFrames(stack)) {
    if (frames.length === ERROR_IDENTITY_LIMITS.maxFrames) break;
    const normalized = normalizeFrame(frame);
    if (normalized !== undefined && normalized !== frames.at(-1)) frames.push(normalized);
  }

  const canonical = JSON.stringify(
    frames.length > 0
      ? [CANONICAL_VERSION, name, 'frames', ...frames]
      : [CANONICAL_VERSION, name, 'message', message],
  );
  const fingerprint = createHash('sha256').update(canonical, 'utf8').digest('hex').slice(0, 32);

  const fullTitle = message === '' ? name : `${name}: ${message}`;
  const title =
    fullTitle.length > ERROR_IDENTITY_LIMITS.maxTitleLength
      ? `${truncate(fullTitle, ERROR_IDENTITY_LIMITS.maxTitleLength - 1).trimEnd()}…`
      : fullTitle;

  return { fingerprint, title, frames, name };
}

/**
 * Parses the frames of a V8/Chromium, Firefox or Safari stack, top first, without normalizing
 * them (see {@link StackFrame}; {@link errorIdentity} normalizes).
 *
 * Design: servers/api/docs/fingerprints.md#parsing-a-stack (the stack formats read).
 *
 * @example
 * ```ts
 * parseStackFrames('TypeError: x is undefined\n    at handleClick (https://example.com/app.js:10:5)\n    at https://example.com/app.js:20:1');
 * // [{ function: 'handleClick', file: 'https://example.com/app.js', line: 10, column: 5 },
 * //  { file: 'https://example.com/app.js', line: 20, column: 1 }]
 * parseStackFrames('handleClick@https://example.com/app.js:10:5\n@https://example.com/app.js:20:1');
 * // the same frames, from Firefox or Safari
 * ```
 */
export function parseStackFrames(stack: string): StackFrame[] {
  const lines = firstLines(typeof stack === 'string' ? stack : '');
  const isV8 = lines.some((line) => V8_LINE.test(line));
  const frames: StackFrame[] = [];
  for (const line of lines) {
    if (line.length > ERROR_IDENTITY_LIMITS.maxStackLineLength) continue;
    const frame = isV8 ? parseV8Line(line) : parseGeckoLine(line);
    if (frame !== undefined && (frame.function !== undefined || frame.file !== undefined)) frames.push(frame);
  }
  return frames;
}

/**
 * Normalizes an error message so that messages that differ only in their data read the same,
 * and no data is left to leak into a title or a webhook.
 *
 * Design: servers/api/docs/fingerprints.md#messages (what is replaced, in which order).
 *
 * @example
 * ```ts
 * normalizeMessage("Cannot read properties of undefined (reading 'id')");
 * // "Cannot read properties of undefined (reading '<str>')"
 * normalizeMessage('User bob@example.com not found in org 3f9a2b7c-1d2e-4f5a-8b9c-0d1e2f3a4b5c (took 1532 ms)\nat …');
 * // 'User <email> not found in org <uuid> (took <n> ms)'
 * ```
 */
export function normalizeMessage(message: string): string {
  const line = firstLineOf(typeof message === 'string' ? message : '');
  const scrubbed = scrub(line.replace(/\s+/g, ' ').trim());
  return truncate(scrubbed, ERROR_IDENTITY_LIMITS.maxMessageLength).trimEnd();
}

// --- Names and titles ---

function normalizeName(name: string | null | undefined): string {
  if (typeof name !== 'string') return 'Error';
  const text = scrub(capText(name).replace(/\s+/g, ' ').trim());
  const normalized = truncate(text, ERROR_IDENTITY_LIMITS.maxNameLength).trimEnd();
  return normalized === '' ? 'Error' : normalized;
}

/**
 * Removes the `Name: message` header V8 puts at the top of a stack, including every line of a
 * multi-line message, so that a message which quotes another error's stack is not read as frames.
 */
function withoutHeader(stack: string, name: string | null | undefined, message: string): string {
  const headerName = typeof name === 'string' ? name : 'Error';
  const candidates = message === '' ? [headerName] : [`${headerName}: ${message}`, message];
  for (const header of candidates) {
    if (header === '' || header.length > ERROR_IDENTITY_LIMITS.maxHeaderLength) continue;
    if (!stack.startsWith(header)) continue;
    const next = stack.charAt(header.length);
    if (next === '' || next === '\n' || next === '\r') return stack.slice(header.length);
  }
  return stack;
}

// --- Stack lines ---

const V8_LINE = /^at\s/;

function firstLines(stack: string): string[] {
  const { maxStackLines, maxStackLineLength } = ERROR_IDENTITY_LIMITS;
  // A cut here can only shorten a line that is already too long to be read, or one after it.
  const bound = maxStackLines * (maxStackLineLength + 2);
  const text = stack.length > bound ? stack.slice(0, bound) : stack;
  const lines: string[] = [];
  let start = 0;
  while (lines.length < maxStackLines && start < text.length) {
    const newline = text.indexOf('\n', start);
    const end = newline === -1 ? text.length : newline;
    lines.push(text.slice(start, end).trim());
    start = end + 1;
  }
  return lines;
}

function parseV8Line(line: string): StackFrame | undefined {
  if (!V8_LINE.test(line)) return undefined;
  const rest = line.slice(3).trim();
  const open = rest.endsWith(')') ? rest.indexOf(' (') : -1;
  if (open === -1) {
    // `at url:line:col`: an anonymous function (V8 prints `async ` here too, rarely).
    const location = rest.startsWith('async ') ? rest.slice(6).trim() : rest;
    const bare = location.startsWith('(') && location.endsWith(')') ? location.slice(1, -1) : location;
    return parseV8Location(bare.trim());
  }
  const callee = rest.slice(0, open).trim();
  return {
    ...(callee === '' ? {} : { function: callee }),
    ...parseV8Location(rest.slice(open + 2, -1).trim()),
  };
}

function parseV8Location(location: string): StackFrame {
  if (!location.startsWith('eval at ')) return parsePosition(location);
  // `eval at outer (eval at inner (url:1:2), <anonymous>:3:4), <anonymous>:5:6`: each eval
  // origin opens a deeper parenthesis, so the script is in the last one.
  const open = location.lastIndexOf('(');
  const close = location.indexOf(')', open);
  return open === -1 || close === -1 ? {} : parsePosition(location.slice(open + 1, close));
}

function parseGeckoLine(line: string): StackFrame | undefined {
  const at = line.indexOf('@');
  if (at === -1) {
    // Older Safari prints an anonymous frame as a bare `url:line:col`.
    return /^[a-z][a-z0-9+.-]*:\/\/\S+$/i.test(line) ? parsePosition(line) : undefined;
  }
  const callee = line.slice(0, at).trim();
  if (callee.includes(': ')) return undefined;
  const location = line.slice(at + 1).trim();
  // Firefox: `url line 2 > eval:1:5`, `url line 2 > Function:1:1`, nested `… > eval line 1 > eval:…`.
  const evalOrigin = / line (\d+) > /.exec(location);
  const position =
    evalOrigin === null
      ? parsePosition(location)
      : { ...fileOnly(location.slice(0, evalOrigin.index)), ...lineOnly(evalOrigin[1]) };
  return { ...(callee === '' ? {} : { function: callee }), ...position };
}

function parsePosition(location: string): StackFrame {
  const position = /:(\d+)(?::(\d+))?$/.exec(location);
  if (position === null) return fileOnly(location);
  const line = toPositiveInteger(position[1]);
  const column = toPositiveInteger(position[2]);
  return {
    ...fileOnly(location.slice(0, position.index)),
    ...(line === undefined ? {} : { line }),
    ...(column === undefined ? {} : { column }),
  };
}

function fileOnly(file: string): StackFrame {
  const trimmed = file.trim();
  return trimmed === '' ? {} : { file: trimmed };
}

function lineOnly(digits: string | undefined): StackFrame {
  const line = toPositiveInteger(digits);
  return line === undefined ? {} : { line };
}

function toPositiveInteger(digits: string | undefined): number | undefined {
  if (digits === undefined) return undefined;
  const value = Number(digits);
  return Number.isSafeInteger(value) ? value : undefined;
}

// --- Frame normalization ---

const NATIVE_FILE = /^(?:<[^>]*>|\[native code\]|native|self-hosted|index \d+|unknown location)$/i;
const EXTENSION_FILE =
  /^(?:chrome-extension|moz-extension|safari-extension|safari-web-extension|ms-browser-extension|webkit-masked-url):|^extensions::/i;
const FUNCTION_PREFIXES = ['async ', 'new ', 'Object.'];

function normalizeFrame(frame: StackFrame): string | undefined {
  const file = frame.file === undefined ? '' : normalizeFile(frame.file);
  if (file === undefined) return undefined;
  const name = normalizeFunctionName(frame.function);
  if (name === '?' && file === '') return undefined;
  return `${name}@${file}`;
}

function normalizeFunctionName(callee: string | undefined): string {
  let name = (callee ?? '').trim();
  // Firefox names the async cause before a `*`: `promise callback*loadCart`, `async*loadCart`.
  name = name.slice(name.lastIndexOf('*') + 1);
  // V8: `Object.handleClick [as onClick]`.
  const alias = name.endsWith(']') ? name.lastIndexOf(' [as ') : -1;
  if (alias !== -1) name = name.slice(0, alias);
  name = name.replace(/\s+/g, ' ').trim();
  for (let prefix = findPrefix(name); prefix !== undefined; prefix = findPrefix(name)) {
    name = name.slice(prefix.length).trimStart();
  }
  if (name === '' || name === '<anonymous>') return '?';
  return truncate(name, ERROR_IDENTITY_LIMITS.maxFramePartLength);
}

function findPrefix(name: string): string | undefined {
  return FUNCTION_PREFIXES.find((prefix) => name.startsWith(prefix));
}

/** The path of a frame's file; `undefined` for a frame to drop (an extension's, native code). */
function normalizeFile(file: string): string | undefined {
  let text = file.trim();
  if (text === '') return '';
  if (NATIVE_FILE.test(text)) return undefined;
  if (/^blob:/i.test(text)) text = text.slice(5);
  if (EXTENSION_FILE.test(text)) return undefined;
  if (/^data:/i.test(text)) return 'data:';
  const origin = /^[a-z][a-z0-9+.-]*:\/\/[^/?#]*/i.exec(text);
  if (origin !== null) text = text.slice(origin[0].length);
  const end = text.search(/[?#]/);
  if (end !== -1) text = text.slice(0, end);
  if (origin !== null && text === '') text = '/';
  const path = replaceContentHashes(text);
  const { maxFramePartLength } = ERROR_IDENTITY_LIMITS;
  // Keep the end: the file name tells more than the first directories.
  return path.length > maxFramePartLength ? path.slice(path.length - maxFramePartLength) : path;
}

const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi;

function replaceContentHashes(path: string): string {
  return path
    .split('/')
    .map((segment) => {
      if (/^\d+$/.test(segment)) return '*';
      return segment
        .replace(UUID, '*')
        .split('.')
        .map(replaceHashSuffix)
        .join('.')
        .replace(/[A-Za-z0-9]+/g, (token) => (isHashToken(token) ? '*' : token));
    })
    .join('/');
}

/** Rollup/Vite (`index-BxY7kQ_z`) and esbuild (`chunk-AB12CD34`): `name-` and an 8-char hash. */
function replaceHashSuffix(part: string): string {
  const start = part.length - 8;
  if (start < 2 || part[start - 1] !== '-') return part;
  const suffix = part.slice(start);
  const looksRandom = /^[\w-]{8}$/.test(suffix) && (/\d/.test(suffix) || /.[A-Z]/.test(suffix));
  return looksRandom ? `${part.slice(0, start)}*` : part;
}

function isHashToken(token: string): boolean {
  const hasDigit = /\d/.test(token);
  if (/^[0-9a-f]+$/i.test(token)) return token.length >= 8 || (token.length >= 6 && hasDigit);
  return token.length >= 8 && hasDigit && /[a-z]/i.test(token);
}

// --- Message scrubbing ---

/** `scheme://…` up to whitespace, a quote or an angle bracket; starts only where a scheme can. */
const URL_PATTERN = /(?<![a-z0-9+.-])[a-z][a-z0-9+.-]*:\/\/[^\s'"`<>]*/gi;
const UUID_PATTERN =
  /(?<![0-9a-z])[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}(?![0-9a-z])/gi;
/** An opening `'` follows a non-word char, so the apostrophes of `can't` and `it's` open nothing. */
const QUOTED_PATTERN = /(?<!\w)'[^']*'|"[^"]*"|`[^`]*`/g;
const HEX_PATTERN = /(?<![0-9a-z])(?:0x[0-9a-f]+|(?=[0-9a-f]*[a-f])[0-9a-f]{8,})(?![0-9a-z])/gi;
const NUMBER_PATTERN = /\d+(?:\.\d+)*/g;
const DOMAIN_PATTERN = /[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+/y;
const EMAIL_LOCAL_CHAR = /[\w.!#$%&'*+/=?^`{|}~-]/;
const QUOTES = `'"\``;

function scrub(text: string): string {
  return replaceEmails(text.replace(URL_PATTERN, '<url>'))
    .replace(UUID_PATTERN, '<uuid>')
    .replace(QUOTED_PATTERN, (quoted) => `${quoted[0]}<str>${quoted[0]}`)
    .replace(HEX_PATTERN, '<hex>')
    .replace(NUMBER_PATTERN, (number: string, offset: number, whole: string) =>
      // `utf8`, `h1`, `Http2Error` are names, not data: one or two digits after a letter.
      number.length <= 2 && /[A-Za-z_]/.test(whole.charAt(offset - 1)) ? number : '<n>',
    );
}

/**
 * Replaces `local@domain.tld` with `<email>`, scanning from each `@` (linear: the local parts
 * scanned for two `@` never overlap). A local part does not start with a quote unless it is
 * nothing else, so a quoted address keeps its quotes for the quoted-string rule.
 */
function replaceEmails(text: string): string {
  let result = '';
  let copied = 0;
  let at = text.indexOf('@');
  while (at !== -1) {
    let start = at;
    while (start > copied && EMAIL_LOCAL_CHAR.test(text.charAt(start - 1))) start--;
    let unquoted = start;
    while (unquoted < at && QUOTES.includes(text.charAt(unquoted))) unquoted++;
    if (unquoted < at) start = unquoted;
    DOMAIN_PATTERN.lastIndex = at + 1;
    const domain = DOMAIN_PATTERN.exec(text);
    if (start < at && domain !== null) {
      result += `${text.slice(copied, start)}<email>`;
      copied = DOMAIN_PATTERN.lastIndex;
      at = text.indexOf('@', copied);
    } else {
      at = text.indexOf('@', at + 1);
    }
  }
  return result + text.slice(copied);
}

// --- Text bounds ---

function capText(text: string): string {
  return truncate(text, ERROR_IDENTITY_LIMITS.maxTextInput);
}

/** The first line of the first 2 000 chars; when that line goes on, without its cut last word. */
function firstLineOf(message: string): string {
  const capped = capText(message);
  const newline = capped.search(/[\r\n\u2028\u2029]/);
  if (newline !== -1) return capped.slice(0, newline);
  if (capped.length === message.length) return capped;
  let end = capped.length;
  while (end > 0 && !/\s/.test(capped.charAt(end - 1))) end--;
  return capped.slice(0, end);
}

/** At most `length` UTF-16 units, without splitting a surrogate pair. */
function truncate(text: string, length: number): string {
  if (text.length <= length) return text;
  const last = text.charCodeAt(length - 1);
  return text.slice(0, last >= 0xd800 && last <= 0xdbff ? length - 1 : length);
}
