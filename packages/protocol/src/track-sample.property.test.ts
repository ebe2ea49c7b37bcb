import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { jsonSchemaValidator } from '../test/validators.ts';
import { trackSampleSchema } from './call-sample.ts';
import { parseChunk } from './chunk.ts';
import { PROTOCOL_LIMITS } from './limits.ts';
import { isWireEventType } from './session-event.ts';

const percentage = fc.double({ min: 0, max: 100, noNaN: true });
const count = fc.integer({ min: 0, max: PROTOCOL_LIMITS.maxCount });
const validTrack = fc.record(
  {
    id: fc.string({ minLength: 1, maxLength: 128 }),
    kind: fc.constantFrom('audio', 'video'),
    dir: fc.constantFrom('in', 'out'),
    lossPct: percentage,
    rttMs: fc.double({ min: 0, max: PROTOCOL_LIMITS.maxLatencyMs, noNaN: true }),
    freezes: count,
    freezeMs: fc.integer({ min: 0, max: PROTOCOL_LIMITS.maxDurationMs }),
    concealmentPct: percentage,
    audioLevel: fc.double({ min: 0, max: 1, noNaN: true }),
    fps: fc.double({ min: 0, max: PROTOCOL_LIMITS.maxFramesPerSecond, noNaN: true }),
    w: fc.integer({ min: 0, max: PROTOCOL_LIMITS.maxDimension }),
    kbps: fc.double({ min: 0, max: PROTOCOL_LIMITS.maxKbps, noNaN: true }),
    qualityLimitation: fc.constantFrom('none', 'cpu', 'bandwidth', 'other'),
    codec: fc.constantFrom('audio/opus', 'video/VP8', 'video/H264', 'video/AV1'),
    stalled: fc.boolean(),
  },
  { requiredKeys: ['id', 'kind', 'dir'] },
);

/** Anything JSON can carry in a track entry's metric fields, valid or not. */
const anyTrack = fc.record(
  {
    id: fc.oneof(fc.string({ maxLength: 130 }), fc.integer()),
    kind: fc.constantFrom('audio', 'video', 'screen'),
    dir: fc.constantFrom('in', 'out', 'both'),
    lossPct: fc.oneof(fc.double({ noNaN: true, noDefaultInfinity: true }), fc.constant(null), fc.string()),
    audioLevel: fc.oneof(fc.double({ min: -1, max: 2, noNaN: true }), fc.constant(null)),
    freezes: fc.oneof(fc.integer({ min: -5, max: 5 }), fc.double({ min: 0, max: 5, noNaN: true })),
    w: fc.oneof(fc.integer({ min: -1, max: PROTOCOL_LIMITS.maxDimension + 1 }), fc.boolean()),
    qualityLimitation: fc.constantFrom('none', 'cpu', 'thermal'),
  },
  { requiredKeys: [] },
);

describe('track entries (property)', () => {
  const validate = jsonSchemaValidator('TrackSample');

  it('a valid track entry round-trips through JSON and both validators accept it', () => {
    fc.assert(
      fc.property(validTrack, (track) => {
        const wire = JSON.parse(JSON.stringify(track)) as unknown;
        expect(trackSampleSchema.parse(wire)).toEqual(track);
        expect(validate(wire)).toBe(true);
      }),
    );
  });

  it('zod and the JSON Schema agree on any track entry', () => {
    fc.assert(
      fc.property(anyTrack, (track) => {
        const wire = JSON.parse(JSON.stringify(track)) as unknown;
        expect(validate(wire)).toBe(trackSampleSchema.safeParse(wire).success);
      }),
    );
  });
});

describe('parseChunk (property)', () => {
  const t = 1763700000000;
  const known = fc.constantFrom(
    { t, type: 'nav', url: 'https://app.example.com/' },
    { t, type: 'governor', level: 'healthy' },
    { t, type: 'trigger', name: 'webrtc:freeze' },
  );
  const unknown = fc
    .string({ minLength: 1, maxLength: 20 })
    .filter((type) => !isWireEventType(type))
    .map((type) => ({ t, type, note: 'from a newer SDK' }));

  it('keeps every known event in order and reports every unknown one by index', () => {
    fc.assert(
      fc.property(fc.array(fc.oneof(known, unknown), { maxLength: 30 }), (events) => {
        const result = parseChunk({
          v: 1,
          sessionId: 'ses_01KAJBCH80XTQ0YDPAV81S476S',
          seq: 3,
          sentAt: t,
          events,
        });
        if (!result.success) throw new Error(result.error.message);
        expect(result.chunk.events).toEqual(events.filter((event) => !('note' in event)));
        expect(result.skipped).toEqual(
          events.flatMap((event, index) => ('note' in event ? [{ index, type: event.type }] : [])),
        );
      }),
    );
  });
});
