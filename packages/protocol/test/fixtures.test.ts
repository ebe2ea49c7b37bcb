import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { renderCallChunk } from '../scripts/call-fixture.ts';
import { OPTIONAL_META_FIELDS, parseChunk } from '../src/index.ts';
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
  const conforming = tolerated.filter(({ dropped }) => dropped === undefined || dropped.length === 0);
  const repaired = tolerated.filter(({ dropped }) => dropped !== undefined && dropped.length > 0);

  it('is a catalogue of uniquely named cases, each with a reason, covering every optional meta field', () => {
    expect(new Set(tolerated.map(({ name }) => name)).size).toBe(tolerated.length);
    for (const entry of tolerated) expect(entry.reason.length).toBeGreaterThan(10);
    const droppedPaths = new Set(repaired.flatMap(({ dropped = [] }) => dropped.map(({ path }) => path)));
    expect([...droppedPaths].sort()).toEqual(OPTIONAL_META_FIELDS.map((field) => `meta.${field}`).sort());
  });

  it.each(conforming)('$name passes the zod schema and the JSON Schema', ({ schema, value }) => {
    expect(zodSchemaOf(schema).safeParse(value).error?.issues).toBeUndefined();
    const validate = jsonSchemaValidator(schema);
    expect(validate(value), JSON.stringify(validate.errors)).toBe(true);
  });

  it.each(tolerated.filter(({ schema }) => schema === 'Chunk'))(
    '$name is accepted by parseChunk, reporting what it skipped and dropped',
    ({ value, skipped, dropped = [] }) => {
      const result = parseChunk(value);
      expect(result.success).toBe(true);
      if (!result.success) return;
      expect(result.skipped).toEqual(skipped);
      expect(result.dropped.map(({ path, reason }) => ({ path, reason }))).toEqual(dropped);
      for (const field of result.dropped) expect(field.message.length).toBeGreaterThan(0);
      if (dropped.length === 0) expect(result.input).toBe(value);
    },
  );

  // A sender must not send these (the schemas refuse them, only at the dropped fields); the
  // server reads them tolerantly, and what it keeps conforms.
  it.each(repaired)(
    '$name fails the strict schemas only at the fields parseChunk drops',
    ({ schema, value, dropped = [] }) => {
      const droppedPaths = dropped.map(({ path }) => path.split('.'));
      const zodResult = zodSchemaOf(schema).safeParse(value);
      expect(zodResult.success).toBe(false);
      for (const issue of zodResult.error?.issues ?? [])
        expect(
          droppedPaths.some((path) => startsWith(issue.path, path)),
          JSON.stringify(issue),
        ).toBe(true);
      const validate = jsonSchemaValidator(schema);
      expect(validate(value)).toBe(false);
      const pointers = droppedPaths.map(toJsonPointer);
      for (const error of validate.errors ?? [])
        expect(
          pointers.some(
            (pointer) => error.instancePath === pointer || error.instancePath.startsWith(`${pointer}/`),
          ),
          JSON.stringify(error),
        ).toBe(true);
    },
  );

  it.each(repaired)(
    '$name is stored without the dropped fields, and that conforms',
    ({ schema, value, dropped = [] }) => {
      const before = JSON.stringify(value);
      const result = parseChunk(value);
      if (!result.success) throw new Error(result.error.message);
      expect(JSON.stringify(value)).toBe(before);
      expect(zodSchemaOf(schema).safeParse(result.input).error?.issues).toBeUndefined();
      const validate = jsonSchemaValidator(schema);
      expect(validate(result.input), JSON.stringify(validate.errors)).toBe(true);
      for (const { path } of dropped) {
        const [, ...keys] = path.split('.');
        const last = keys.pop() as string;
        const container = keys.reduce<unknown>(
          (object, key) => (object as Record<string, unknown> | undefined)?.[key],
          (result.input as { meta?: unknown }).meta,
        );
        expect(container === undefined || !Object.hasOwn(container as object, last)).toBe(true);
      }
      // Everything else is kept as sent.
      const { meta: sentMeta, ...sentRest } = value as { meta: Record<string, unknown> };
      const { meta: keptMeta, ...keptRest } = result.input as unknown as { meta: Record<string, unknown> };
      expect(keptRest).toEqual(sentRest);
      for (const key of Object.keys(sentMeta))
        if (!dropped.some(({ path }) => path.startsWith(`meta.${key}`)))
          expect(keptMeta[key]).toEqual(sentMeta[key]);
    },
  );
});
