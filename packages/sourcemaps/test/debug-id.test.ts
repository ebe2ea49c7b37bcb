import { describe, expect, it } from 'vitest';
import { createDebugId, injectDebugId, readDebugId, sourceMappingUrl } from '../src/index.ts';
import { buildBundle } from './builds.ts';

const UUID_V8 = /^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe('createDebugId', () => {
  it('is a UUIDv8 derived from the code and the map: the same build gets the same id, any change another', () => {
    const id = createDebugId('a();\n', '{"version":3}');
    expect(id).toMatch(UUID_V8);
    expect(createDebugId('a();\n', '{"version":3}')).toBe(id);
    expect(createDebugId('b();\n', '{"version":3}')).not.toBe(id);
    expect(createDebugId('a();\n', '{"version":3,"x":1}')).not.toBe(id);
    expect(createDebugId('a();\n')).not.toBe(id);
    // The separator: moving bytes from the code to the map is another build.
    expect(createDebugId('a', 'b')).not.toBe(createDebugId('ab', ''));
  });
});

describe('injectDebugId', () => {
  it('puts the comment before the sourceMappingURL line and the id into the map of a real esbuild bundle', async () => {
    const { code, map } = await buildBundle('main.js');
    expect(sourceMappingUrl(code)).toBe('main.js.map');
    const result = injectDebugId(code, map);
    if (!result.ok) throw new Error(result.message);
    expect(result.changed).toBe(true);
    expect(result.debugId).toMatch(UUID_V8);
    const lines = code.trimEnd().split('\n');
    expect(result.code.trimEnd().split('\n')).toEqual([
      ...lines.slice(0, -1),
      `//# debugId=${result.debugId}`,
      '//# sourceMappingURL=main.js.map',
    ]);
    expect(readDebugId(result.code)).toBe(result.debugId);
    expect(sourceMappingUrl(result.code)).toBe('main.js.map');
    const injectedMap = JSON.parse(result.map as string);
    expect(injectedMap).toEqual({ ...JSON.parse(map as string), debugId: result.debugId });
  });

  it('is deterministic and idempotent', async () => {
    const { code, map } = await buildBundle('main.js');
    const first = injectDebugId(code, map);
    const again = injectDebugId(code, map);
    expect(again).toEqual(first);
    if (!first.ok) throw new Error(first.message);
    const second = injectDebugId(first.code, first.map);
    expect(second).toEqual({ ...first, changed: false });
  });

  it('appends the comment on its own line when there is no sourceMappingURL (hidden maps)', () => {
    const withoutNewline = injectDebugId('run()');
    expect(withoutNewline).toMatchObject({ ok: true, changed: true });
    if (!withoutNewline.ok) return;
    expect(withoutNewline.code).toBe(`run()\n//# debugId=${withoutNewline.debugId}\n`);
    expect(withoutNewline.map).toBeUndefined();
    const withNewline = injectDebugId('run()\n');
    if (!withNewline.ok) throw new Error(withNewline.message);
    expect(withNewline.code).toBe(`run()\n//# debugId=${withNewline.debugId}\n`);
  });

  it('keeps an id already injected (by anyone) and gives it to the map', () => {
    const id = '85314830-023f-4cf1-a267-535f4e37bb17';
    const code = `run();\n//# debugId=${id.toUpperCase()}\n//# sourceMappingURL=main.js.map\n`;
    const result = injectDebugId(code, '{"version":3,"sources":[],"mappings":""}');
    expect(result).toEqual({
      ok: true,
      debugId: id,
      code,
      map: `{"version":3,"sources":[],"mappings":"","debugId":"${id}"}`,
      changed: true,
    });
  });

  it('rewrites a map whose id (debugId or debug_id) is another build', () => {
    const id = '85314830-023f-4cf1-a267-535f4e37bb17';
    const code = `run();\n//# debugId=${id}\n`;
    for (const field of ['debugId', 'debug_id']) {
      const result = injectDebugId(
        code,
        JSON.stringify({ version: 3, [field]: '00000000-0000-4000-8000-000000000000' }),
      );
      expect(result).toMatchObject({ ok: true, changed: true });
      if (result.ok) expect(JSON.parse(result.map as string)).toEqual({ version: 3, debugId: id });
    }
    const same = injectDebugId(code, JSON.stringify({ version: 3, debug_id: id, debugId: id }));
    expect(same).toMatchObject({ ok: true, changed: false });
  });

  it('refuses a map that is not a JSON object, without touching the code', () => {
    expect(injectDebugId('run();\n', 'not json')).toEqual({
      ok: false,
      reason: 'invalid_map',
      message: 'is not JSON',
    });
    expect(injectDebugId('run();\n', '[1]')).toEqual({
      ok: false,
      reason: 'invalid_map',
      message: 'is not a JSON object',
    });
  });
});

describe('readDebugId', () => {
  it('reads the last valid comment that ends its line, as the server does', () => {
    const first = '11111111-1111-4111-8111-111111111111';
    const last = '22222222-2222-4222-8222-222222222222';
    expect(readDebugId(`//# debugId=${first}\nx\n//# debugId=${last}`)).toBe(last);
    expect(readDebugId(`//# debugId=${first}x\n`)).toBeUndefined();
    expect(readDebugId('//# debugId=not-a-uuid-not-a-uuid-not-a-uuid-12345\n')).toBeUndefined();
  });
});
