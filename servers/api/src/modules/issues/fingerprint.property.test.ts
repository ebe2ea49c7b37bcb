import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ERROR_IDENTITY_LIMITS, errorIdentity, normalizeMessage } from './fingerprint.ts';

const word = fc.constantFrom(
  'Cannot',
  'read',
  'order',
  'failed',
  'for',
  'user',
  'at',
  'is',
  'not',
  'found',
  '(id',
  ')',
);
const number = fc.oneof(fc.nat(), fc.integer({ min: 100, max: 2 ** 48 })).map(String);
/** Message fragments: plain text, words, and the data normalization must remove. */
const fragment = fc.oneof(
  fc.string({ maxLength: 30 }),
  word,
  number,
  fc.emailAddress(),
  fc.uuid(),
  fc.webUrl(),
  fc.string({ maxLength: 20 }).map((text) => `'${text.replaceAll("'", '')}'`),
);
const messageArbitrary = fc.array(fragment, { maxLength: 12 }).map((parts) => parts.join(' '));
const nameArbitrary = fc.option(
  fc.oneof(
    fc.constantFrom('TypeError', 'RangeError', 'ChunkLoadError', 'AbortError', ''),
    fc.string({ maxLength: 150 }),
  ),
  { nil: undefined },
);
const identifier = fc.stringMatching(/^[A-Za-z_$][\w$]{0,12}$/);
const hash = fc.string({ unit: fc.constantFrom(...'0123456789abcdef'), minLength: 8, maxLength: 20 });
const position = fc.tuple(fc.integer({ min: 1, max: 99_999 }), fc.integer({ min: 1, max: 999_999 }));
const bundleName = fc.constantFrom('main', 'app', 'vendors', 'cart', 'checkout');

/** A V8 or Firefox/Safari stack of webpack bundles (`name.hash.js`) with the given positions. */
function renderStack(
  engine: 'v8' | 'gecko',
  frames: ReadonlyArray<{ function: string; bundle: string }>,
  hashes: readonly string[],
  positions: ReadonlyArray<readonly [number, number]>,
): string {
  const lines = frames.map((frame, index) => {
    const file = `https://shop.example.com/static/js/${frame.bundle}.${hashes[index % hashes.length]}.js`;
    const [line, column] = positions[index % positions.length] ?? [1, 1];
    return engine === 'v8'
      ? `    at ${frame.function} (${file}:${line}:${column})`
      : `${frame.function}@${file}:${line}:${column}`;
  });
  return engine === 'v8' ? ['Error: boom', ...lines].join('\n') : lines.join('\n');
}

const frameList = fc
  .uniqueArray(identifier, { minLength: 1, maxLength: 6 })
  .chain((functions) =>
    fc.tuple(
      fc.constant(functions),
      fc.array(bundleName, { minLength: functions.length, maxLength: functions.length }),
    ),
  )
  .map(([functions, bundles]) =>
    functions.map((name, index) => ({ function: name, bundle: bundles[index] ?? 'main' })),
  );
const engine = fc.constantFrom('v8' as const, 'gecko' as const);

describe('errorIdentity properties', () => {
  it('is deterministic, with a 32-hex fingerprint, a title of at most 200 chars and bounded parts, for any input', () => {
    fc.assert(
      fc.property(
        nameArbitrary,
        fc.oneof(messageArbitrary, fc.string({ maxLength: 3000 })),
        fc.option(
          fc.oneof(
            fc.string({ maxLength: 500 }),
            frameList.map((frames) => renderStack('v8', frames, ['3f9a2b7c'], [[1, 1]])),
          ),
          { nil: undefined },
        ),
        (name, message, stack) => {
          const identity = errorIdentity({ name, message, stack });
          expect(identity.fingerprint).toMatch(/^[0-9a-f]{32}$/);
          expect(errorIdentity({ name, message, stack })).toEqual(identity);
          expect(identity.title.length).toBeLessThanOrEqual(ERROR_IDENTITY_LIMITS.maxTitleLength);
          expect(identity.name.length).toBeGreaterThan(0);
          expect(identity.name.length).toBeLessThanOrEqual(ERROR_IDENTITY_LIMITS.maxNameLength);
          expect(identity.frames.length).toBeLessThanOrEqual(ERROR_IDENTITY_LIMITS.maxFrames);
          expect(normalizeMessage(message).length).toBeLessThanOrEqual(
            ERROR_IDENTITY_LIMITS.maxMessageLength,
          );
        },
      ),
      { numRuns: 500 },
    );
  });

  it('never puts an email address or a run of 3 or more digits of the input in the title', () => {
    fc.assert(
      fc.property(
        fc.array(fc.emailAddress(), { minLength: 1, maxLength: 3 }),
        messageArbitrary,
        nameArbitrary,
        fc.boolean(),
        (emails, message, name, emailInName) => {
          const withEmails = [message, ...emails].join(' ');
          const identity = errorIdentity({
            name: emailInName ? `${name ?? ''} ${emails[0]}` : name,
            message: withEmails,
          });
          for (const email of emails) expect(identity.title).not.toContain(email);
          // Stronger than "no digit run of the input": the title has no run of 3 digits at all.
          expect(identity.title).not.toMatch(/\d{3}/);
        },
      ),
      { numRuns: 1000 },
    );
  });

  it('keeps the fingerprint when lines, columns and content hashes change (a new build)', () => {
    fc.assert(
      fc.property(
        engine,
        frameList,
        fc.array(hash, { minLength: 1, maxLength: 3 }),
        fc.array(hash, { minLength: 1, maxLength: 3 }),
        fc.array(position, { minLength: 1, maxLength: 6 }),
        fc.array(position, { minLength: 1, maxLength: 6 }),
        messageArbitrary,
        (stackEngine, frames, hashesBefore, hashesAfter, positionsBefore, positionsAfter, message) => {
          const before = errorIdentity({
            message,
            stack: renderStack(stackEngine, frames, hashesBefore, positionsBefore),
          });
          const after = errorIdentity({
            message,
            stack: renderStack(stackEngine, frames, hashesAfter, positionsAfter),
          });
          expect(after.fingerprint).toBe(before.fingerprint);
          expect(before.frames).toHaveLength(Math.min(frames.length, ERROR_IDENTITY_LIMITS.maxFrames));
        },
      ),
      { numRuns: 300 },
    );
  });

  it('changes the fingerprint when a function of the top three frames changes', () => {
    fc.assert(
      fc.property(engine, frameList, fc.nat(), identifier, (stackEngine, frames, pick, replacement) => {
        fc.pre(!frames.some((frame) => frame.function === replacement));
        const index = pick % Math.min(frames.length, ERROR_IDENTITY_LIMITS.maxFrames);
        const changed = frames.map((frame, at) =>
          at === index ? { ...frame, function: replacement } : frame,
        );
        const before = errorIdentity({
          message: 'boom',
          stack: renderStack(stackEngine, frames, ['3f9a2b7c'], [[1, 1]]),
        });
        const after = errorIdentity({
          message: 'boom',
          stack: renderStack(stackEngine, changed, ['3f9a2b7c'], [[1, 1]]),
        });
        // `Object.x` and `x` are one function once normalized; any other change is a new issue.
        fc.pre(before.frames[index] !== after.frames[index]);
        expect(after.fingerprint).not.toBe(before.fingerprint);
      }),
      { numRuns: 300 },
    );
  });

  it('clusters stackless errors whose messages differ only in numbers, ids and addresses', () => {
    // Addresses as people have them: fast-check's may start with a quote, which reads as a
    // quoted address (`'<str>'`) when another quote follows in the message.
    const address = fc
      .tuple(fc.stringMatching(/^[a-z0-9][a-z0-9._+-]{0,15}$/), fc.domain())
      .map(([local, domain]) => `${local}@${domain}`);
    /** A place of the message and its text in two errors: the same word, or two values of one kind. */
    const place = fc.oneof(
      word.map((text) => [text, text] as const),
      fc.tuple(number, number),
      fc.tuple(address, address),
      fc.tuple(fc.uuid(), fc.uuid()),
    );
    fc.assert(
      fc.property(fc.array(place, { minLength: 1, maxLength: 10 }), (places) => {
        const first = errorIdentity({ name: 'Error', message: places.map(([text]) => text).join(' ') });
        const second = errorIdentity({ name: 'Error', message: places.map(([, text]) => text).join(' ') });
        expect(second.fingerprint).toBe(first.fingerprint);
        expect(second.title).toBe(first.title);
      }),
      { numRuns: 500 },
    );
  });
});
