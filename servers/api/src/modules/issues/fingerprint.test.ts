import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  ERROR_IDENTITY_LIMITS,
  type ErrorIdentity,
  errorIdentity,
  normalizeMessage,
  parseStackFrames,
} from './fingerprint.ts';

interface BrowserErrorCase {
  id: string;
  browser: string;
  bug: string;
  note: string;
  error: { name?: string; message: string; stack?: string };
  expected: ErrorIdentity;
}

const fixture = JSON.parse(
  readFileSync(new URL('./__fixtures__/browser-errors.json', import.meta.url), 'utf8'),
) as { cases: BrowserErrorCase[] };

/** A V8 stack: the header, then one `    at …` line per frame. */
function v8Stack(header: string, ...frames: string[]): string {
  return [header, ...frames.map((frame) => `    at ${frame}`)].join('\n');
}

/** The frames errorIdentity keeps from a stack. */
function framesOf(stack: string): string[] {
  return errorIdentity({ name: 'Error', message: 'boom', stack }).frames;
}

describe('errorIdentity on recorded browser errors (__fixtures__/browser-errors.json)', () => {
  it.each(fixture.cases.map((vector) => [vector.id, vector] as const))('%s', (_id, vector) => {
    expect(errorIdentity(vector.error)).toEqual(vector.expected);
  });

  it('gives each browser one fingerprint per bug, across builds, pages and status codes', () => {
    const groups = new Map<string, BrowserErrorCase[]>();
    for (const vector of fixture.cases) {
      const group = `${vector.browser}/${vector.bug}`;
      groups.set(group, [...(groups.get(group) ?? []), vector]);
    }
    expect(groups.size).toBeGreaterThanOrEqual(12);
    for (const [group, vectors] of groups) {
      expect(vectors.length, group).toBeGreaterThanOrEqual(2);
      const fingerprints = new Set(vectors.map((vector) => errorIdentity(vector.error).fingerprint));
      expect(fingerprints.size, group).toBe(1);
    }
  });

  it('gives different bugs different fingerprints', () => {
    const bugOf = new Map<string, string>();
    for (const vector of fixture.cases) {
      const { fingerprint } = errorIdentity(vector.error);
      expect(bugOf.get(fingerprint) ?? vector.bug, vector.id).toBe(vector.bug);
      bugOf.set(fingerprint, vector.bug);
    }
    expect(new Set(bugOf.values()).size).toBe(new Set(fixture.cases.map((vector) => vector.bug)).size);
  });
});

describe('parseStackFrames', () => {
  it('reads every kind of V8 frame, and not the header', () => {
    const stack = v8Stack(
      'TypeError: x is not a function',
      'handleClick (https://example.com/app.js:10:5)',
      'https://example.com/app.js:20:1',
      'async loadCart (https://example.com/app.js:30:7)',
      'new CheckoutForm (https://example.com/app.js:40:3)',
      'Object.<anonymous> (https://example.com/app.js:50:9)',
      'Object.handleSubmit [as onSubmit] (https://example.com/app.js:60:2)',
      'Array.forEach (<anonymous>)',
      'async Promise.all (index 0)',
      'eval (eval at compile (https://example.com/app.js:70:11), <anonymous>:1:1)',
      'Object.eval (eval at a (eval at b (https://example.com/lib.js:3:4), <anonymous>:1:2), <anonymous>:5:6)',
      'https://example.com:8443/app.js:80:4',
    );
    expect(parseStackFrames(stack)).toEqual([
      { function: 'handleClick', file: 'https://example.com/app.js', line: 10, column: 5 },
      { file: 'https://example.com/app.js', line: 20, column: 1 },
      { function: 'async loadCart', file: 'https://example.com/app.js', line: 30, column: 7 },
      { function: 'new CheckoutForm', file: 'https://example.com/app.js', line: 40, column: 3 },
      { function: 'Object.<anonymous>', file: 'https://example.com/app.js', line: 50, column: 9 },
      {
        function: 'Object.handleSubmit [as onSubmit]',
        file: 'https://example.com/app.js',
        line: 60,
        column: 2,
      },
      { function: 'Array.forEach', file: '<anonymous>' },
      { function: 'async Promise.all', file: 'index 0' },
      { function: 'eval', file: 'https://example.com/app.js', line: 70, column: 11 },
      { function: 'Object.eval', file: 'https://example.com/lib.js', line: 3, column: 4 },
      { file: 'https://example.com:8443/app.js', line: 80, column: 4 },
    ]);
  });

  it('reads Firefox frames: async causes, `/<` names, eval origins', () => {
    const stack = [
      'fetchJson@https://example.com/app.js:2:4416',
      'async*loadCart@https://example.com/app.js:2:5126',
      'promise callback*refresh@https://example.com/app.js:3:1',
      'App/</<@https://example.com/app.js:4:2',
      'compiled@https://example.com/app.js line 2 > eval:1:5',
      '@https://example.com/app.js line 9 > Function:1:1',
      'forEach@self-hosted:203:17',
      'connect@http://localhost:5173/@vite/client:10:5',
      '',
    ].join('\n');
    expect(parseStackFrames(stack)).toEqual([
      { function: 'fetchJson', file: 'https://example.com/app.js', line: 2, column: 4416 },
      { function: 'async*loadCart', file: 'https://example.com/app.js', line: 2, column: 5126 },
      { function: 'promise callback*refresh', file: 'https://example.com/app.js', line: 3, column: 1 },
      { function: 'App/</<', file: 'https://example.com/app.js', line: 4, column: 2 },
      { function: 'compiled', file: 'https://example.com/app.js', line: 2 },
      { file: 'https://example.com/app.js', line: 9 },
      { function: 'forEach', file: 'self-hosted', line: 203, column: 17 },
      { function: 'connect', file: 'http://localhost:5173/@vite/client', line: 10, column: 5 },
    ]);
  });

  it('reads Safari frames: global code, native code, bare locations', () => {
    const stack = [
      'onAddToCart@https://example.com/app.js:41:1190',
      'dispatchEvent@[native code]',
      '@https://example.com/app.js:37:37853',
      'https://example.com/legacy.js:5:6',
      'eval code@',
      'global code@https://example.com/products/1:42:5',
    ].join('\n');
    expect(parseStackFrames(stack)).toEqual([
      { function: 'onAddToCart', file: 'https://example.com/app.js', line: 41, column: 1190 },
      { function: 'dispatchEvent', file: '[native code]' },
      { file: 'https://example.com/app.js', line: 37, column: 37853 },
      { file: 'https://example.com/legacy.js', line: 5, column: 6 },
      { function: 'eval code' },
      { function: 'global code', file: 'https://example.com/products/1', line: 42, column: 5 },
    ]);
  });

  it('skips the header and the further lines of a multi-line message in a V8 stack', () => {
    const stack = v8Stack(
      'Error: GraphQL failed\n{"errors":[{"message":"boom@https://api.example.com:1:2"}]}',
      'runQuery (https://example.com/app.js:1:2)',
    );
    expect(parseStackFrames(stack)).toEqual([
      { function: 'runQuery', file: 'https://example.com/app.js', line: 1, column: 2 },
    ]);
  });

  it('does not read a `Name: message` line that mentions an address as a Firefox frame', () => {
    expect(parseStackFrames('Error: could not mail bob@example.com:25')).toEqual([]);
    expect(parseStackFrames('Error: boom')).toEqual([]);
  });

  it('returns no frame for text that is no stack', () => {
    for (const text of ['', '\n\n', 'undefined', '[object Object]', '@', 'at', '    at ']) {
      expect(parseStackFrames(text), JSON.stringify(text)).toEqual([]);
    }
  });

  it('reads the first 50 lines only, and skips lines longer than 2 000 chars', () => {
    const filler = Array.from({ length: 49 }, (_, index) => `message line ${index}`);
    const frame = '    at handleClick (https://example.com/app.js:1:2)';
    expect(parseStackFrames([...filler, frame].join('\n'))).toHaveLength(1);
    expect(parseStackFrames([...filler, 'one more', frame].join('\n'))).toEqual([]);

    const long = `    at handleClick (https://example.com/${'a'.repeat(ERROR_IDENTITY_LIMITS.maxStackLineLength)}.js:1:2)`;
    expect(parseStackFrames(`${long}\n${frame}`)).toEqual([
      { function: 'handleClick', file: 'https://example.com/app.js', line: 1, column: 2 },
    ]);
  });
});

describe('errorIdentity: frames', () => {
  it.each([
    ['https://shop.example.com/static/js/main.3f9a2b7c.js', '/static/js/main.*.js'],
    ['https://cdn.example.net/static/js/main.3f9a2b7c.js?v=2#top', '/static/js/main.*.js'],
    ['https://shop.example.com/static/js/787.8e1d0c4b.chunk.js', '/static/js/787.*.chunk.js'],
    ['https://shop.example.com/static/js/main.abcdefab.js', '/static/js/main.*.js'],
    ['https://shop.example.com/assets/chunk-AB12CD34.js', '/assets/chunk-*.js'],
    ['https://shop.example.com/assets/chunk-QWERTYUI.js', '/assets/chunk-*.js'],
    ['https://shop.example.com/assets/index-BxY7kQ_z.js', '/assets/index-*.js'],
    ['https://shop.example.com/assets/vendor-react-CyZ_3a-L.js', '/assets/vendor-react-*.js'],
    ['https://shop.example.com/assets/index-BxYkQzWa.js', '/assets/index-*.js'],
    [
      'https://shop.example.com/_next/static/chunks/pages/_app-a1b2c3d4e5f6a7b8.js',
      '/_next/static/chunks/pages/_app-*.js',
    ],
    [
      'https://shop.example.com/_next/static/x7Fk2Lq9Ab3/_buildManifest.js',
      '/_next/static/*/_buildManifest.js',
    ],
    ['https://shop.example.com/orders/3f9a2b7c-1d2e-4f5a-8b9c-0d1e2f3a4b5c', '/orders/*'],
    ['https://shop.example.com/products/123456', '/products/*'],
    ['https://shop.example.com/products/7', '/products/*'],
    ['blob:https://shop.example.com/0b8e6c1a-9f3d-4e2b-a7c5-6d4f2e1b3a9c', '/*'],
    ['data:text/javascript;base64,YWxlcnQoMSk=', 'data:'],
    ['https://shop.example.com', '/'],
    ['http://localhost:5173/src/App.tsx?t=1712345678901', '/src/App.tsx'],
    ['app.js', 'app.js'],
    // Not hashes: words, short hex without a digit, library names with a digit or two.
    ['https://shop.example.com/js/user-settings.js', '/js/user-settings.js'],
    ['https://shop.example.com/js/page-about-us.js', '/js/page-about-us.js'],
    ['https://shop.example.com/js/Facade.js', '/js/Facade.js'],
    ['https://shop.example.com/js/polyfills-es2015.js', '/js/polyfills-es2015.js'],
    ['https://shop.example.com/js/vue.runtime.esm-browser.prod.js', '/js/vue.runtime.esm-browser.prod.js'],
  ])('file %s is %s', (url, path) => {
    expect(framesOf(v8Stack('Error: boom', `f (${url}:12:34)`))).toEqual([`f@${path}`]);
  });

  it.each([
    ['handleClick', 'handleClick'],
    ['async loadCart', 'loadCart'],
    ['new CheckoutForm', 'CheckoutForm'],
    ['Object.handleClick', 'handleClick'],
    ['async Object.handleClick', 'handleClick'],
    ['new Object.Thing', 'Thing'],
    ['Object.handleSubmit [as onSubmit]', 'handleSubmit'],
    ['Object.<anonymous>', '?'],
    ['<anonymous>', '?'],
    ['HTMLButtonElement.callCallback', 'HTMLButtonElement.callCallback'],
    ['Module.default', 'Module.default'],
  ])('V8 function %s is %s', (callee, name) => {
    expect(framesOf(v8Stack('Error: boom', `${callee} (https://example.com/app.js:1:2)`))).toEqual([
      `${name}@/app.js`,
    ]);
  });

  it.each([
    ['async*loadCart', 'loadCart'],
    ['promise callback*loadCart', 'loadCart'],
    ['EventHandlerNonNull*', '?'],
    ['App/</<', 'App/</<'],
    ['global code', 'global code'],
    ['', '?'],
  ])('Firefox/Safari function %j is %s', (callee, name) => {
    expect(framesOf(`${callee}@https://example.com/app.js:1:2`)).toEqual([`${name}@/app.js`]);
  });

  it('drops line and column, and the origin: the same code at another place of a rebuilt bundle is the same frame', () => {
    const build1 = v8Stack('Error: boom', 'f (https://a.example.com/static/js/main.3f9a2b7c.js:10:5)');
    const build2 = v8Stack('Error: boom', 'f (https://cdn.example.net/static/js/main.8e1d0c4b.js:12:377)');
    expect(errorIdentity({ message: 'boom', stack: build1 })).toEqual(
      errorIdentity({ message: 'boom', stack: build2 }),
    );
  });

  it('skips frames of browser extensions and of native code', () => {
    const chromium = v8Stack(
      'Error: boom',
      'chrome-extension://hdokiejnpimakedhajhdlcegeplioahd/content.js:1:1',
      'HTMLDocument.<anonymous> (chrome-extension://hdokiejnpimakedhajhdlcegeplioahd/content.js:2:2)',
      'Array.forEach (<anonymous>)',
      'JSON.parse (<anonymous>)',
      'new Promise (<anonymous>)',
      'async Promise.all (index 0)',
      'handleClick (https://example.com/app.js:1:1)',
      'blob:chrome-extension://hdokiejnpimakedhajhdlcegeplioahd/0b8e6c1a-9f3d-4e2b-a7c5-6d4f2e1b3a9c:3:3',
      'main (https://example.com/app.js:2:2)',
    );
    expect(framesOf(chromium)).toEqual(['handleClick@/app.js', 'main@/app.js']);

    const firefox = [
      'wrapped@moz-extension://6a3f0c2e-4b1d-4e8a-9f7c-2d5b8e1a0c3f/content.js:1:1',
      'forEach@self-hosted:203:17',
      'handleClick@https://example.com/app.js:1:1',
    ].join('\n');
    expect(framesOf(firefox)).toEqual(['handleClick@/app.js']);

    const safari = [
      'wrapped@safari-web-extension://E3B0C442-98FC-4C14-9AFB-F4C8996FB924/content.js:1:1',
      'masked@webkit-masked-url://hidden/:1:1',
      'legacy@safari-extension://com.example.ext-ABCDE12345/content.js:1:1',
      'forEach@[native code]',
      'handleClick@https://example.com/app.js:1:1',
    ].join('\n');
    expect(framesOf(safari)).toEqual(['handleClick@/app.js']);
  });

  it('clusters an error thrown by an extension by its name and message, as if it had no stack', () => {
    const stack = v8Stack(
      'TypeError: port is closed',
      'Object.send (chrome-extension://hdokiejnpimakedhajhdlcegeplioahd/background.js:9:9)',
    );
    const withStack = errorIdentity({ name: 'TypeError', message: 'port is closed', stack });
    expect(withStack.frames).toEqual([]);
    expect(withStack).toEqual(errorIdentity({ name: 'TypeError', message: 'port is closed' }));
  });

  it('uses the top three frames: a change below them keeps the fingerprint, one within them does not', () => {
    const frames = [
      'a (https://x.com/app.js:1:1)',
      'b (https://x.com/app.js:2:1)',
      'c (https://x.com/app.js:3:1)',
    ];
    const base = errorIdentity({
      message: 'boom',
      stack: v8Stack('Error: boom', ...frames, 'd (https://x.com/d.js:1:1)'),
    });
    const below = errorIdentity({
      message: 'boom',
      stack: v8Stack('Error: boom', ...frames, 'e (https://x.com/e.js:1:1)'),
    });
    const within = errorIdentity({
      message: 'boom',
      stack: v8Stack('Error: boom', ...frames.slice(0, 2), 'c (https://x.com/other.js:3:1)'),
    });
    expect(base.frames).toEqual(['a@/app.js', 'b@/app.js', 'c@/app.js']);
    expect(below.fingerprint).toBe(base.fingerprint);
    expect(within.fingerprint).not.toBe(base.fingerprint);
  });

  it('gives a different function, file or name a different fingerprint', () => {
    const identity = (name: string, frame: string) =>
      errorIdentity({ name, message: 'boom', stack: v8Stack(`${name}: boom`, frame) }).fingerprint;
    const base = identity('TypeError', 'handleClick (https://x.com/static/js/main.3f9a2b7c.js:1:1)');
    expect(identity('TypeError', 'handleClick (https://x.com/static/js/main.8e1d0c4b.js:9:9)')).toBe(base);
    expect(identity('TypeError', 'handleSubmit (https://x.com/static/js/main.3f9a2b7c.js:1:1)')).not.toBe(
      base,
    );
    expect(identity('TypeError', 'handleClick (https://x.com/static/js/cart.3f9a2b7c.js:1:1)')).not.toBe(
      base,
    );
    expect(identity('RangeError', 'handleClick (https://x.com/static/js/main.3f9a2b7c.js:1:1)')).not.toBe(
      base,
    );
  });

  it('leaves the message out of the fingerprint when there are frames', () => {
    const stack = v8Stack('Error: x', 'handleClick (https://x.com/app.js:1:1)');
    const first = errorIdentity({ message: 'Order 1 failed', stack });
    const second = errorIdentity({ message: 'Completely different words', stack });
    expect(second.fingerprint).toBe(first.fingerprint);
    expect(second.title).not.toBe(first.title);
  });

  it('collapses recursion: the same function at any depth is one issue', () => {
    const render = 'render (https://x.com/app.js:5:1)';
    const rest = ['App (https://x.com/app.js:9:1)', 'main (https://x.com/app.js:12:1)'];
    const shallow = errorIdentity({ message: 'boom', stack: v8Stack('Error: boom', render, ...rest) });
    const deep = errorIdentity({
      message: 'boom',
      stack: v8Stack('Error: boom', render, render, render, ...rest),
    });
    expect(deep.frames).toEqual(['render@/app.js', 'App@/app.js', 'main@/app.js']);
    expect(deep.fingerprint).toBe(shallow.fingerprint);
  });

  it('reads the frames under a message that quotes another stack, not the quoted ones', () => {
    const message = 'Render failed: Error: inner\n    at inner (https://x.com/lib.js:1:1)';
    const stack = v8Stack(`Error: ${message}`, 'outer (https://x.com/app.js:5:5)');
    expect(errorIdentity({ message, stack }).frames).toEqual(['outer@/app.js']);
    expect(errorIdentity({ name: 'Error', message, stack }).frames).toEqual(['outer@/app.js']);
  });
});

describe('errorIdentity: name and fingerprint', () => {
  it('normalizes the name: trimmed, at most 100 chars, Error when absent or blank', () => {
    expect(errorIdentity({ message: 'x' }).name).toBe('Error');
    expect(errorIdentity({ name: null, message: 'x' }).name).toBe('Error');
    expect(errorIdentity({ name: ' \n\t', message: 'x' }).name).toBe('Error');
    expect(errorIdentity({ name: '  TypeError \n', message: 'x' }).name).toBe('TypeError');
    expect(errorIdentity({ name: 'N'.repeat(500), message: 'x' }).name).toBe('N'.repeat(100));
    expect(errorIdentity({ name: 'Http2Error', message: 'x' }).name).toBe('Http2Error');
    // The name is scrubbed like a message: it reaches the title too.
    expect(errorIdentity({ name: 'Error for bob@example.com #12345', message: 'x' }).name).toBe(
      'Error for <email> #<n>',
    );
  });

  it('is 32 lowercase hex chars, the same for the same input, and absent and blank names are one', () => {
    const input = {
      name: 'TypeError',
      message: 'x',
      stack: v8Stack('TypeError: x', 'f (https://x.com/a.js:1:1)'),
    };
    const { fingerprint } = errorIdentity(input);
    expect(fingerprint).toMatch(/^[0-9a-f]{32}$/);
    expect(errorIdentity(structuredClone(input)).fingerprint).toBe(fingerprint);
    expect(errorIdentity({ message: 'x' }).fingerprint).toBe(
      errorIdentity({ name: '  ', message: 'x' }).fingerprint,
    );
    expect(errorIdentity({ message: 'x' }).fingerprint).toBe(
      errorIdentity({ name: 'Error', message: 'x' }).fingerprint,
    );
  });
});

describe('errorIdentity without a usable stack: clustered by name and normalized message', () => {
  it('ignores ids, numbers, addresses and URLs in the message', () => {
    const first = errorIdentity({
      message: 'Order 48213 not found for jane@example.com (request 3f9a2b7c-1d2e-4f5a-8b9c-0d1e2f3a4b5c)',
    });
    const second = errorIdentity({
      message:
        'Order 7 not found for j.smith+shop@mail.example.org (request 0b8e6c1a-9f3d-4e2b-a7c5-6d4f2e1b3a9c)',
      stack: null,
    });
    expect(second.fingerprint).toBe(first.fingerprint);
    expect(first.frames).toEqual([]);
    expect(
      errorIdentity({ message: 'Loading chunk 787 failed. (https://x.com/static/js/787.3f9a2b7c.chunk.js)' })
        .fingerprint,
    ).toBe(
      errorIdentity({ message: 'Loading chunk 12 failed. (https://x.com/static/js/12.8e1d0c4b.chunk.js)' })
        .fingerprint,
    );
  });

  it("clusters `Cannot read properties of undefined (reading 'x')` and `(reading 'y')` together: quoted values are data", () => {
    const x = errorIdentity({
      name: 'TypeError',
      message: "Cannot read properties of undefined (reading 'x')",
    });
    const y = errorIdentity({
      name: 'TypeError',
      message: "Cannot read properties of undefined (reading 'y')",
    });
    expect(y.fingerprint).toBe(x.fingerprint);
    expect(x.title).toBe("TypeError: Cannot read properties of undefined (reading '<str>')");
  });

  it('keeps apart different messages and different names', () => {
    const base = errorIdentity({ name: 'TypeError', message: 'x is not a function' }).fingerprint;
    expect(errorIdentity({ name: 'TypeError', message: 'x is not iterable' }).fingerprint).not.toBe(base);
    expect(errorIdentity({ name: 'RangeError', message: 'x is not a function' }).fingerprint).not.toBe(base);
  });

  it('uses the first line of the message only', () => {
    expect(errorIdentity({ message: 'Request failed\nbody: {"id": 1}' }).fingerprint).toBe(
      errorIdentity({ message: 'Request failed\nbody: {"id": 2, "user": "x"}' }).fingerprint,
    );
  });
});

describe('normalizeMessage', () => {
  it.each([
    [
      "Cannot read properties of undefined (reading 'id')",
      "Cannot read properties of undefined (reading '<str>')",
    ],
    [
      'can\'t access property "id", product is undefined',
      'can\'t access property "<str>", product is undefined',
    ],
    [
      "undefined is not an object (evaluating 'product.id')",
      "undefined is not an object (evaluating '<str>')",
    ],
    [
      'Unexpected token \'<\', "<!doctype "... is not valid JSON',
      'Unexpected token \'<str>\', "<str>"... is not valid JSON',
    ],
    ['Unknown template `order-{id}`', 'Unknown template `<str>`'],
    ["It's 'x' and it's 'y'", "It's '<str>' and it's '<str>'"],
    ["Invalid address 'bob@example.com'", "Invalid address '<str>'"],
    ['No account for jane.doe+test@example.co.uk.', 'No account for <email>.'],
    [
      'Failed to fetch dynamically imported module: https://x.com/assets/Cart-BxY7kQ2z.js',
      'Failed to fetch dynamically imported module: <url>',
    ],
    ['GET https://api.x.com/v1/users?email=bob@x.com 404', 'GET <url> <n>'],
    ['Session 3F9A2B7C-1D2E-4F5A-8B9C-0D1E2F3A4B5C expired', 'Session <uuid> expired'],
    ['Object 5f3e2a1b9c8d not found (etag deadbeef)', 'Object <hex> not found (etag <hex>)'],
    ['Bad pointer 0x1f at offset 12', 'Bad pointer <hex> at offset <n>'],
    ['Loading chunk 787 failed.', 'Loading chunk <n> failed.'],
    ['Took 1.25s, limit 250ms, 3 tries', 'Took <n>s, limit <n>ms, <n> tries'],
    ['user1234 on utf8 page h1 Http2Error v1.2.3 ES2015', 'user<n> on utf8 page h1 Http2Error v<n> ES<n>'],
    ['Call +1 (555) 123-4567', 'Call +<n> (<n>) <n>-<n>'],
    ['  Request   failed\twith  status\n503 and more', 'Request failed with status'],
    ['first\r\nsecond', 'first'],
    ['', ''],
  ])('%j → %j', (message, normalized) => {
    expect(normalizeMessage(message)).toBe(normalized);
  });

  it('is at most 200 chars', () => {
    expect(normalizeMessage('word '.repeat(100))).toHaveLength(199);
    expect(normalizeMessage('x'.repeat(10_000)).length).toBeLessThanOrEqual(
      ERROR_IDENTITY_LIMITS.maxMessageLength,
    );
    expect(normalizeMessage('😀'.repeat(150))).toBe('😀'.repeat(100));
  });

  it('drops the word cut by the 2 000-char cap, so half an address never shows', () => {
    const message = `'${'x'.repeat(1990)}' bob.smith@example.com and more`;
    expect(normalizeMessage(message)).toBe("'<str>'");
  });
});

describe('titles', () => {
  it('is `name: message`, or the name alone for an empty message', () => {
    expect(errorIdentity({ name: 'TypeError', message: 'x is undefined' }).title).toBe(
      'TypeError: x is undefined',
    );
    expect(errorIdentity({ name: 'AbortError', message: '' }).title).toBe('AbortError');
    expect(errorIdentity({ message: '   ' }).title).toBe('Error');
  });

  it('never carries what normalization removes', () => {
    const secrets = [
      'jane.doe@example.com',
      '48213',
      'hunter2-password',
      '3f9a2b7c-1d2e-4f5a-8b9c-0d1e2f3a4b5c',
      'https://internal.example.com/admin?token=abc',
      '5f3e2a1b9c8d',
    ];
    const { title } = errorIdentity({
      name: 'ValidationError for jane.doe@example.com',
      message: `User jane.doe@example.com (id 48213) sent "hunter2-password" for 3f9a2b7c-1d2e-4f5a-8b9c-0d1e2f3a4b5c at https://internal.example.com/admin?token=abc, etag 5f3e2a1b9c8d`,
      stack: v8Stack('ValidationError: …', 'validate (https://x.com/app.js:1:1)'),
    });
    expect(title).toBe(
      'ValidationError for <email>: User <email> (id <n>) sent "<str>" for <uuid> at <url> etag <hex>',
    );
    for (const secret of secrets) expect(title).not.toContain(secret);
  });

  it('is at most 200 chars, and ends in … when cut', () => {
    const { title } = errorIdentity({ name: 'N'.repeat(150), message: 'word '.repeat(100) });
    expect(title.length).toBeLessThanOrEqual(ERROR_IDENTITY_LIMITS.maxTitleLength);
    expect(title.endsWith('…')).toBe(true);
    expect(title.startsWith(`${'N'.repeat(100)}: word word`)).toBe(true);
  });
});

describe('bounds', () => {
  // A guard against catastrophic backtracking (which takes seconds to years), not a benchmark:
  // the bound is far above what a linear pass over the capped input takes.
  const quickly = <T>(run: () => T): T => {
    const started = performance.now();
    const result = run();
    expect(performance.now() - started).toBeLessThan(500);
    return result;
  };
  const megabyte = 1_000_000;

  it('reads a 1 MB stack as its first 50 lines', () => {
    const frame = (index: number) => `    at f${index} (https://x.com/static/js/main.3f9a2b7c.js:${index}:1)`;
    const lines = ['Error: boom'];
    for (let index = 0, length = 0; length < megabyte; index++) {
      lines.push(frame(index));
      length += frame(index).length + 1;
    }
    const huge = lines.join('\n');
    const head = lines.slice(0, ERROR_IDENTITY_LIMITS.maxStackLines).join('\n');
    expect(quickly(() => parseStackFrames(huge))).toEqual(parseStackFrames(head));
    expect(parseStackFrames(huge)).toHaveLength(ERROR_IDENTITY_LIMITS.maxStackLines - 1);
    expect(quickly(() => errorIdentity({ message: 'boom', stack: huge }))).toEqual(
      errorIdentity({ message: 'boom', stack: head }),
    );
  });

  it('reads a 1 MB message as its first 2 000 chars', () => {
    const message = `Order 1 failed ${'because '.repeat(megabyte / 8)}`;
    const identity = quickly(() => errorIdentity({ message, stack: message }));
    expect(identity.title.length).toBeLessThanOrEqual(ERROR_IDENTITY_LIMITS.maxTitleLength);
    expect(identity.fingerprint).toBe(
      errorIdentity({ message: `Order 2 failed ${'because '.repeat(300)}` }).fingerprint,
    );
  });

  it.each([
    ['one word', 'a'.repeat(megabyte)],
    ['dotted words', 'a.'.repeat(megabyte / 2)],
    ['apostrophes', "a '".repeat(megabyte / 3)],
    ['unclosed quotes', `'${'a'.repeat(megabyte)}`],
    ['at signs', '@'.repeat(megabyte)],
    ['local parts without domains', 'a@'.repeat(megabyte / 2)],
    ['domains without ends', 'x@a.'.repeat(megabyte / 4)],
    ['schemes', 'a:/'.repeat(megabyte / 3)],
    ['hex', `${'0123456789abcdef'.repeat(megabyte / 16)}g`],
    ['numbers', '1.'.repeat(megabyte / 2)],
    ['positions', ':1'.repeat(megabyte / 2)],
    ['V8 frames without ends', `    at f (${'eval at g ('.repeat(megabyte / 11)}`],
    ['V8 lines', '    at '.repeat(megabyte / 7)],
    ['Firefox lines', 'f@'.repeat(megabyte / 2)],
    ['many short lines', 'a@b:1:2\n'.repeat(megabyte / 8)],
  ])('stays linear on adversarial input: %s', (_name, text) => {
    const identity = quickly(() => errorIdentity({ name: text, message: text, stack: text }));
    expect(identity.fingerprint).toMatch(/^[0-9a-f]{32}$/);
    expect(identity.title.length).toBeLessThanOrEqual(ERROR_IDENTITY_LIMITS.maxTitleLength);
    expect(identity.name.length).toBeLessThanOrEqual(ERROR_IDENTITY_LIMITS.maxNameLength);
    quickly(() => normalizeMessage(text));
    quickly(() => parseStackFrames(text));
  });
});
