import { TraceMap } from '@jridgewell/trace-mapping';
import { beforeAll, describe, expect, it } from 'vitest';
import { bundleDebugId, candidateUrls, checkSourceMap, fileUrl } from './files.ts';
import {
  type BuiltBundle,
  buildCheckout,
  CALL_LINE,
  CHECKOUT_SOURCE,
  stackOf,
  THROW_LINE,
} from './sourcemaps.fixture.ts';
import { CONTEXT_LINES, stackFrames, symbolicateFrames } from './symbolicate.ts';

const URL_OF_BUNDLE = 'https://shop.example.com/static/js/main.js';

let bundle: BuiltBundle;
let other: BuiltBundle;
beforeAll(async () => {
  bundle = await buildCheckout({ name: 'main.js', debugId: true });
  other = await buildCheckout({ name: 'main.js', debugId: true, padding: 4 });
});

describe('symbolicateFrames', () => {
  it('maps a real V8 stack of a minified esbuild bundle to the original file, line and function', async () => {
    const map = new TraceMap(bundle.map);
    const frames = await symbolicateFrames(stackFrames(stackOf(bundle, URL_OF_BUNDLE)), async (file) =>
      file === URL_OF_BUNDLE ? map : undefined,
    );
    expect(frames[0]).toMatchObject({
      mapped: true,
      file: 'src/checkout.ts',
      line: THROW_LINE,
      function: 'validate',
    });
    expect(frames[1]).toMatchObject({
      mapped: true,
      file: 'src/checkout.ts',
      line: CALL_LINE,
      function: 'checkout',
    });
    const sourceLines = CHECKOUT_SOURCE.split('\n');
    if (frames[0]?.mapped !== true) throw new Error('unmapped');
    expect(frames[0].context).toEqual({
      before: sourceLines.slice(THROW_LINE - 1 - CONTEXT_LINES, THROW_LINE - 1),
      line: sourceLines[THROW_LINE - 1],
      after: sourceLines.slice(THROW_LINE, THROW_LINE + CONTEXT_LINES),
    });
    // Frames outside the bundle (the test runner) come back as they were.
    expect(frames.slice(2).every((frame) => !frame.mapped)).toBe(true);
  });

  it('names the original file as a project path whatever folder or bundler wrote the map', async () => {
    for (const source of ['../../src/checkout.ts', 'webpack://shop/./src/checkout.ts', './src/checkout.ts']) {
      const map = new TraceMap({ ...JSON.parse(bundle.map), sources: [source] });
      const [top] = await symbolicateFrames(stackFrames(stackOf(bundle, URL_OF_BUNDLE)), async () => map);
      expect(top).toMatchObject({
        mapped: true,
        file: 'src/checkout.ts',
        line: THROW_LINE,
        function: 'validate',
      });
      expect(top?.mapped === true && top.context?.line).toContain('throw new TypeError');
    }
  });

  it('reads Firefox and Safari stacks', async () => {
    const map = new TraceMap(bundle.map);
    const v8 = stackFrames(stackOf(bundle, URL_OF_BUNDLE));
    const top = v8[0] as { line: number; column: number };
    const gecko = `validate@${URL_OF_BUNDLE}:${top.line}:${top.column}\n@${URL_OF_BUNDLE}:${top.line}:${top.column}`;
    const frames = await symbolicateFrames(stackFrames(gecko), async () => map);
    expect(frames.map((frame) => frame.mapped && frame.line)).toEqual([THROW_LINE, THROW_LINE]);
  });

  it('gives a map of another build wrong lines, which is why the bundle decides', async () => {
    // The same positions through the other build's map land elsewhere: debug ids keep this out.
    const frames = await symbolicateFrames(
      stackFrames(stackOf(bundle, URL_OF_BUNDLE)),
      async () => new TraceMap(other.map),
    );
    expect(frames[0]?.mapped && frames[0].line).not.toBe(THROW_LINE);
  });

  it('returns a frame without a position, or without a map, unchanged', async () => {
    const input = [{ function: 'a' }, { file: 'https://x.example/a.js', line: 1, column: 1 }];
    expect(await symbolicateFrames(input, async () => undefined)).toEqual(
      input.map((frame) => ({ ...frame, mapped: false })),
    );
  });
});

describe('files', () => {
  it('reads the debug id of a bundle and of a map', () => {
    expect(bundleDebugId(bundle.code)).toBe(bundle.debugId);
    expect(bundleDebugId('x()')).toBeUndefined();
    const checked = checkSourceMap(bundle.map);
    expect(checked.ok && checked.debugId).toBe(bundle.debugId);
    const snake = JSON.stringify({
      ...JSON.parse(bundle.map),
      debugId: undefined,
      debug_id: bundle.debugId?.toUpperCase(),
    });
    const checkedSnake = checkSourceMap(snake);
    expect(checkedSnake.ok && checkedSnake.debugId).toBe(bundle.debugId);
  });

  it.each([
    ['not json', 'not_json'],
    ['[]', 'not_json'],
    ['{"version":2,"sources":[],"mappings":""}', 'not_version_3'],
    ['{"version":3,"sources":[]}', 'no_mappings'],
    ['{"version":3,"mappings":""}', 'no_sources'],
    ['{"version":3,"sources":[],"mappings":"","debugId":"nope"}', 'bad_debug_id'],
    ['{"version":3,"sources":[],"mappings":"!!"}', 'unparsable'],
    ['{"version":3,"sources":["a.js"],"names":[],"mappings":"ACAA"}', 'unparsable'],
  ])('refuses %s as %s', (text, reason) => {
    expect(checkSourceMap(text)).toMatchObject({ ok: false, reason });
  });

  it('joins prefixes and names, and lists the URLs a frame may match', () => {
    expect(fileUrl('~/static/js', 'main.js')).toBe('~/static/js/main.js');
    expect(fileUrl('~/', 'a/../b.js')).toBeUndefined();
    expect(fileUrl('~/', 'a b.js')).toBeUndefined();
    expect(candidateUrls(`${URL_OF_BUNDLE}?v=1#x`)).toEqual([URL_OF_BUNDLE, '~/static/js/main.js']);
    expect(candidateUrls('/static/a.js')).toEqual(['/static/a.js', '~/static/a.js']);
  });
});
