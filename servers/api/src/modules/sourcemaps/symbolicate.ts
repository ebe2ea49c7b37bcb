import { originalPositionFor, sourceContentFor, type TraceMap } from '@jridgewell/trace-mapping';
import { parseStackFrames } from '../issues/index.ts';

// Symbolication: a minified frame (script URL, 1-based line and column) to its place in the
// original source, through the frame's source map. Which map a frame gets is the caller's
// business (`findMap`: by debug id, else release and URL; see repository.ts); this file maps.

/** Lines of source shown before and after a mapped line, at most. */
export const CONTEXT_LINES = 5;

/** A frame as printed or sent: `line` and `column` are 1-based, as browsers print them. */
export interface InputFrame {
  file?: string;
  line?: number;
  column?: number;
  function?: string;
}

/** A frame after symbolication: mapped to its original source, or back as it was. */
export type OutputFrame =
  | (InputFrame & { mapped: false })
  | {
      mapped: true;
      /** The original source file, as the map names it (`src/checkout.ts`). */
      file: string;
      line: number;
      /** 1-based, like the input. */
      column: number;
      function?: string;
      /** Where it was in the bundle. */
      generated: InputFrame;
      /** Up to {@link CONTEXT_LINES} lines either side, when the map carries `sourcesContent`. */
      context?: { before: string[]; line: string; after: string[] };
    };

/** Finds the map of a script URL; undefined when there is none to use. */
export type FindMap = (file: string) => Promise<TraceMap | undefined>;

/**
 * The frames of a V8, Firefox or Safari stack (through the issues module's parser).
 *
 * @example
 * ```ts
 * stackFrames('Error: x\n    at a (https://example.com/app.js:1:42)'); // [{ function: 'a', file: 'https://example.com/app.js', line: 1, column: 42 }]
 * ```
 */
export function stackFrames(stack: string): InputFrame[] {
  return parseStackFrames(stack);
}

/**
 * Maps each frame through the map `findMap` gives for its file. A frame without a file, line
 * and column, without a map, or at a position the map does not cover comes back as it was with
 * `mapped: false`. The function name is the original name of the call in the caller's frame
 * (what the map's `names` say was called), else the name of the enclosing function in the
 * original source, else the name printed.
 *
 * @example
 * ```ts
 * const frames = await symbolicateFrames(stackFrames(error.stack), async (file) => maps.get(file));
 * frames[0]; // { mapped: true, file: 'src/checkout.ts', line: 12, column: 11, function: 'validate', ... }
 * ```
 */
export async function symbolicateFrames(
  frames: readonly InputFrame[],
  findMap: FindMap,
): Promise<OutputFrame[]> {
  const maps = new Map<string, Promise<TraceMap | undefined>>();
  const mapOf = (file: string) => {
    let found = maps.get(file);
    if (found === undefined) {
      found = findMap(file);
      maps.set(file, found);
    }
    return found;
  };
  const positions = await Promise.all(
    frames.map(async (frame) => {
      if (frame.file === undefined || frame.line === undefined || frame.column === undefined)
        return undefined;
      const map = await mapOf(frame.file);
      if (map === undefined) return undefined;
      const position = originalPositionFor(map, { line: frame.line, column: Math.max(0, frame.column - 1) });
      if (position.source === null || position.line === null || position.column === null) return undefined;
      return {
        map,
        source: position.source,
        line: position.line,
        column: position.column,
        name: position.name,
      };
    }),
  );
  return frames.map((frame, index): OutputFrame => {
    const position = positions[index];
    if (position === undefined) return { ...frame, mapped: false };
    const lines = sourceLines(position.map, position.source);
    const caller = positions[index + 1];
    const name =
      (caller !== undefined && caller.map === position.map ? caller.name : null) ??
      (lines === undefined ? undefined : enclosingFunctionName(lines, position.line)) ??
      frame.function;
    return {
      mapped: true,
      file: sourcePath(position.source),
      line: position.line,
      column: position.column + 1,
      ...(name === undefined ? {} : { function: name }),
      generated: frame,
      ...(lines === undefined || position.line > lines.length
        ? {}
        : {
            context: {
              before: lines.slice(Math.max(0, position.line - 1 - CONTEXT_LINES), position.line - 1),
              line: lines[position.line - 1] as string,
              after: lines.slice(position.line, position.line + CONTEXT_LINES),
            },
          }),
    };
  });
}

/**
 * A map's source as a path in the project: bundlers write them relative to the map
 * (`../../src/checkout.ts` from `dist/assets/`) or under a scheme of their own
 * (`webpack://shop/./src/checkout.ts`); both read `src/checkout.ts`, so a frame (and the
 * fingerprint made of it) does not change with the output folder or the bundler.
 */
function sourcePath(source: string): string {
  return source.replace(/^webpack:\/\/[^/]*\//, '').replace(/^(?:\.{1,2}\/)+/, '') || source;
}

/** The lines of a map's sources, split once per map and source (a source may be megabytes). */
const LINES = new WeakMap<TraceMap, Map<string, string[] | undefined>>();

function sourceLines(map: TraceMap, source: string): string[] | undefined {
  let sources = LINES.get(map);
  if (sources === undefined) {
    sources = new Map();
    LINES.set(map, sources);
  }
  if (!sources.has(source)) {
    const content = sourceContentFor(map, source);
    sources.set(source, content === null ? undefined : content.split(/\r?\n/));
  }
  return sources.get(source);
}

const FUNCTION_PATTERNS = [
  /\bfunction\s*\*?\s*([A-Za-z_$][\w$]*)\s*[(<]/,
  /\b([A-Za-z_$][\w$]*)\s*[:=]\s*(?:async\s+)?(?:function\b|\([^)]*\)\s*(?::[^=]+)?=>|[A-Za-z_$][\w$]*\s*=>)/,
  /^\s*(?:(?:public|private|protected|static|async|override)\s+)*([A-Za-z_$][\w$]*)\s*\([^)]*\)\s*(?::[^{]+)?\{\s*$/,
];
const KEYWORDS = new Set(['if', 'for', 'while', 'switch', 'catch', 'return', 'function']);

/** The name of the nearest function declared at or above `line` (1-based), read from the source. */
function enclosingFunctionName(lines: readonly string[], line: number): string | undefined {
  for (let index = Math.min(line, lines.length) - 1; index >= 0 && index >= line - 200; index--) {
    const text = lines[index] as string;
    for (const pattern of FUNCTION_PATTERNS) {
      const name = pattern.exec(text)?.[1];
      if (name !== undefined && !KEYWORDS.has(name)) return name;
    }
  }
  return undefined;
}
