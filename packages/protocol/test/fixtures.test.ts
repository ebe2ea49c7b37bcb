import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { renderCallChunk } from '../scripts/call-fixture.ts';
import { parseChunk } from '../src/index.ts';
import {
  jsonSchemaValidator,
  readCatalogue,
  readValidFixtures,
  toJsonPointer,
  zodSchemas,
} from './validators.ts';

function zodSchemaOf(name: string) {
  const schema = zodSchemas[name];
  if (schema === undefined) throw new Error(`No zod schema named ${name}`);
  return schema;
}

const startsWith = (path: ReadonlyArray<PropertyKey>, prefix: ReadonlyArray<string | number>) =>
  prefix.every((segment, index) => path[index] === segment);

describe('valid fixtures', () => {
  const valid = readValidFixtures();

  it('cover chunks, webhooks and error bodies', () => {
    expect(valid.map(({ name }) => name)).toEqual(
      expect.arrayContaining([
        'Chunk/call.json',
        'Chunk/recording-seq-0.json',
        'Chunk/recording-seq-1.json',
        'WebhookEvent/cluster-created.json',
        'ErrorBody/not-found.json',
      ]),
    );
  });

  it.each(valid)('$name passes the zod schema and the JSON Schema', ({ schema, value }) => {
    const result = zodSchemaOf(schema).safeParse(value);
    expect(result.error?.issues).toBeUndefined();
    const validate = jsonSchemaValidator(schema);
    expect(validate(value), JSON.stringify(validate.errors)).toBe(true);
  });

  it.each(valid.filter(({ schema }) => schema === 'Chunk'))(
    '$name parses with nothing skipped',
    ({ value }) => {
      const result = parseChunk(value);
      expect(result.success && result.skipped).toEqual([]);
    },
  );

  it('the recording chunk of seq 0 uses every event type but the call ones', () => {
    const chunk = valid.find(({ name }) => name === 'Chunk/recording-seq-0.json')?.value as {
      events: Array<{ type: string }>;
    };
    expect(new Set(chunk.events.map((event) => event.type))).toEqual(
      new Set(['rrweb', 'nav', 'error', 'custom', 'vital', 'identify', 'trigger', 'gap', 'governor']),
    );
  });
});

describe('the call chunk built from the Chromium dumps', () => {
  const committed = readFileSync(new URL('../fixtures/valid/Chunk/call.json', import.meta.url), 'utf8');

  it('equals a fresh build (run `pnpm --filter @svc/protocol run build:call-fixture` after changing it)', () => {
    expect(committed).toBe(renderCallChunk());
  });

  it('never contains a candidate address', () => {
    expect(committed).not.toMatch(/127\.0\.0\.1|::1|"address"|"port"|"ip"/);
  });

  it('holds every dump as separate peer connections with samples and lifecycle events', () => {
    const result = parseChunk(JSON.parse(committed));
    if (!result.success) throw new Error(result.error.message);
    const samples = result.chunk.events.filter((event) => event.type === 'call.sample');
    expect(samples).toHaveLength(8);
    expect(new Set(samples.map((sample) => sample.pc)).size).toBe(8);
    const names = new Set(
      result.chunk.events.flatMap((event) => (event.type === 'call.event' ? [event.name] : [])),
    );
    expect(names).toEqual(
      new Set([
        'media_acquired',
        'pc_created',
        'track_added',
        'connection_state',
        'ice_state',
        'candidate_pair_change',
        'pc_closed',
      ]),
    );
    const relayed = samples.filter((sample) => sample.conn.relayed === true);
    expect(relayed).toHaveLength(6);
    const frozen = samples.flatMap((sample) => sample.tracks).filter((track) => (track.freezes ?? 0) > 0);
    expect(frozen).toHaveLength(1);
    expect(frozen[0]).toMatchObject({
      kind: 'video',
      dir: 'in',
      freezes: 1,
      freezeMs: 1771,
      maxFreezeMs: 1771,
    });
  });

  it('keeps its events ordered by t', () => {
    const { events } = JSON.parse(committed) as { events: Array<{ t: number }> };
    expect(events.map((event) => event.t)).toEqual(
      events.map((event) => event.t).sort((left, right) => left - right),
    );
  });
});

describe('invalid fixtures', () => {
  const invalid = readCatalogue('invalid');

  it('is a catalogue of uniquely named cases, each with a reason', () => {
    expect(invalid.length).toBeGreaterThanOrEqual(25);
    expect(new Set(invalid.map(({ name }) => name)).size).toBe(invalid.length);
    for (const entry of invalid) expect(entry.reason.length).toBeGreaterThan(10);
  });

  it.each(invalid)('$name fails the zod schema at $path', ({ schema, value, path }) => {
    const result = zodSchemaOf(schema).safeParse(value);
    expect(result.success).toBe(false);
    const paths = result.error?.issues.map((issue) => issue.path) ?? [];
    expect(
      paths.some((issuePath) => startsWith(issuePath, path)),
      JSON.stringify(result.error?.issues),
    ).toBe(true);
  });

  it.each(invalid)('$name fails the JSON Schema at $path', ({ schema, value, path }) => {
    const validate = jsonSchemaValidator(schema);
    expect(validate(value)).toBe(false);
    const pointer = toJsonPointer(path);
    expect(
      validate.errors?.some(
        (error) => error.instancePath === pointer || error.instancePath.startsWith(`${pointer}/`),
      ),
      JSON.stringify(validate.errors?.slice(0, 5)),
    ).toBe(true);
  });

  it.each(invalid.filter(({ schema }) => schema === 'Chunk'))(
    '$name is refused by parseChunk',
    ({ value }) => {
      const result = parseChunk(value);
      expect(result.success).toBe(false);
    },
  );
});

describe('tolerated fixtures', () => {
  const tolerated = readCatalogue('tolerated');

  it.each(tolerated)('$name passes the zod schema and the JSON Schema', ({ schema, value }) => {
    expect(zodSchemaOf(schema).safeParse(value).error?.issues).toBeUndefined();
    const validate = jsonSchemaValidator(schema);
    expect(validate(value), JSON.stringify(validate.errors)).toBe(true);
  });

  it.each(tolerated.filter(({ schema }) => schema === 'Chunk'))(
    '$name is accepted by parseChunk, reporting what it skipped',
    ({ value, skipped }) => {
      const result = parseChunk(value);
      expect(result.success).toBe(true);
      if (result.success) expect(result.skipped).toEqual(skipped);
    },
  );
});
