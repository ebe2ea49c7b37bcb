import { describe, expect, it } from 'vitest';
import { CALL_EVENT_NAMES, callEventSchema, classifyMediaError, MEDIA_ERROR_CLASSES } from './call-event.ts';

describe('classifyMediaError', () => {
  it.each([
    ['NotAllowedError', 'permission_denied'],
    ['NotReadableError', 'device_in_use'],
    ['NotFoundError', 'device_not_found'],
    ['OverconstrainedError', 'constraints_unsatisfied'],
    ['AbortError', 'aborted'],
    ['SecurityError', 'security'],
    ['TypeError', 'type_error'],
  ] as const)('classifies %s as %s', (errorName, expected) => {
    expect(classifyMediaError(errorName)).toBe(expected);
  });

  it.each([
    'QuotaExceededError',
    'notallowederror',
    '',
    'constructor',
    'toString',
    '__proto__',
    'hasOwnProperty',
  ])('classifies %j as unknown', (errorName) => {
    expect(classifyMediaError(errorName)).toBe('unknown');
  });

  it('only returns declared classes', () => {
    expect(MEDIA_ERROR_CLASSES).toContain(classifyMediaError('AbortError'));
  });
});

describe('callEventSchema', () => {
  const pc = 'pc_01KAJBCH80XTQ0YDPAV81S476S';
  const t = 1763700000000;

  it('knows the 20 call event names of PROTOCOL.md §3', () => {
    expect(CALL_EVENT_NAMES).toHaveLength(20);
    expect(CALL_EVENT_NAMES).toContain('candidate_pair_change');
  });

  it('lets media_* and device_* events carry no pc, and requires pc on the others', () => {
    expect(
      callEventSchema.safeParse({
        t,
        type: 'call.event',
        name: 'device_change',
        audioinput: 1,
        videoinput: 0,
        audiooutput: 1,
      }).success,
    ).toBe(true);
    expect(
      callEventSchema.safeParse({
        t,
        type: 'call.event',
        name: 'media_error',
        errorName: 'NotFoundError',
        class: 'device_not_found',
      }).success,
    ).toBe(true);
    expect(callEventSchema.safeParse({ t, type: 'call.event', name: 'ice_restart' }).success).toBe(false);
    expect(callEventSchema.safeParse({ t, type: 'call.event', pc, name: 'ice_restart' }).success).toBe(true);
  });

  it('takes device labels by kind on device_inventory and device_change, and a label on media_acquired', () => {
    const counts = { t, type: 'call.event', audioinput: 2, videoinput: 1, audiooutput: 1 };
    const labels = { audioinput: ['Built-in Microphone', 'USB Headset'], videoinput: ['FaceTime HD Camera'] };
    for (const name of ['device_inventory', 'device_change'])
      expect(callEventSchema.parse({ ...counts, name, labels })).toEqual({ ...counts, name, labels });
    // Without labels (before a permission grant, or in strict privacy mode) as before.
    expect(callEventSchema.safeParse({ ...counts, name: 'device_inventory' }).success).toBe(true);
    expect(
      callEventSchema.safeParse({ ...counts, name: 'device_change', labels: { videoinput: [''] } }).success,
    ).toBe(false);
    expect(
      callEventSchema.safeParse({
        t,
        type: 'call.event',
        name: 'media_acquired',
        kind: 'audio',
        label: 'USB Headset',
      }).success,
    ).toBe(true);
  });

  it('allows freezeMs on track_unmuted only', () => {
    const track = {
      t,
      type: 'call.event',
      pc,
      track: 'trk_1',
      kind: 'video',
      dir: 'in',
      freezeMs: 2500,
    } as const;
    expect(callEventSchema.parse({ ...track, name: 'track_unmuted' })).toMatchObject({ freezeMs: 2500 });
    expect(callEventSchema.parse({ ...track, name: 'track_muted' })).not.toHaveProperty('freezeMs');
  });

  it('reports the offending field of a known name', () => {
    const result = callEventSchema.safeParse({
      t,
      type: 'call.event',
      pc,
      name: 'pc_closed',
      durationMs: 'long',
    });
    expect(result.error?.issues.map((issue) => issue.path)).toEqual([['durationMs']]);
  });
});
