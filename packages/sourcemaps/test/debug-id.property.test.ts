import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { injectDebugId, readDebugId } from '../src/index.ts';

// Any code, with or without a final sourceMappingURL line, and any JSON object as its map.
const line = fc.string({ unit: fc.constantFrom('a', 'b', ';', ' ', '/', '#', '=', '\n', '\r', '(', ')') });
const code = fc
  .tuple(
    line,
    fc.option(fc.constantFrom('main.js.map', 'data:application/json;base64,e30=', '../maps/x.map'), {
      nil: undefined,
    }),
    fc.constantFrom('', '\n', '\n\n'),
  )
  .map(([body, url, end]) =>
    url === undefined ? `${body}${end}` : `${body}\n//# sourceMappingURL=${url}${end}`,
  );
const map = fc.option(
  fc
    .dictionary(fc.constantFrom('version', 'sources', 'mappings', 'names', 'file'), fc.jsonValue())
    .map((value) => JSON.stringify(value)),
  { nil: undefined },
);

describe('injectDebugId (properties)', () => {
  it('is deterministic, idempotent, and leaves every line of code where it was', () => {
    fc.assert(
      fc.property(code, map, (source, sourceMap) => {
        const result = injectDebugId(source, sourceMap);
        if (!result.ok) throw new Error(result.message);
        expect(injectDebugId(source, sourceMap)).toEqual(result);
        expect(injectDebugId(result.code, result.map)).toEqual({ ...result, changed: false });
        expect(readDebugId(result.code)).toBe(result.debugId);
        if (sourceMap !== undefined) expect(JSON.parse(result.map as string).debugId).toBe(result.debugId);
        // Removing the comment gives the code back (with a newline added before it if none ended the code).
        const without = result.code.replace(`//# debugId=${result.debugId}\n`, '');
        expect([source, `${source}\n`]).toContain(without);
        // The lines of code before the comment are the code's own: the map's mappings stay right.
        const lines = source.split('\n');
        const at = result.code.split('\n').indexOf(`//# debugId=${result.debugId}`);
        expect(result.code.split('\n').slice(0, at)).toEqual(lines.slice(0, at));
        // ... and every line with code comes before it (only the sourceMappingURL and blank lines after).
        const lastCode = lines.findLastIndex(
          (text) => text.trim() !== '' && !text.startsWith('//# sourceMappingURL='),
        );
        expect(at).toBeGreaterThan(lastCode);
      }),
    );
  });
});
