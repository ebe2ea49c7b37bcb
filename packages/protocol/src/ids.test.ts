import { describe, expect, it } from 'vitest';
import { ID_PREFIXES, type IdPrefix, idSchema, isId, ULID_PATTERN } from './ids.ts';

const ulid = '01KAJBCH80XTQ0YDPAV81S476S';

describe('idSchema', () => {
  it.each(Object.values(ID_PREFIXES))('accepts %s_ followed by a ULID', (prefix) => {
    expect(idSchema(prefix).parse(`${prefix}_${ulid}`)).toBe(`${prefix}_${ulid}`);
  });

  it.each([
    ['another prefix', `vis_${ulid}`],
    ['no prefix', ulid],
    ['a lowercase ULID', `ses_${ulid.toLowerCase()}`],
    ['a ULID starting with 8 (beyond 48 bits)', `ses_8${ulid.slice(1)}`],
    ['the letter U', `ses_${ulid.slice(0, 25)}U`],
    ['the letter I', `ses_${ulid.slice(0, 25)}I`],
    ['25 characters', `ses_${ulid.slice(1)}`],
    ['27 characters', `ses_${ulid}0`],
    ['a space', ` ses_${ulid}`],
  ])('refuses %s', (_, value) => {
    expect(idSchema('ses').safeParse(value).success).toBe(false);
  });

  it('accepts the largest ULID', () => {
    expect(idSchema('evt').safeParse('evt_7ZZZZZZZZZZZZZZZZZZZZZZZZZ').success).toBe(true);
  });

  it('returns one schema instance per prefix', () => {
    expect(idSchema('pc')).toBe(idSchema('pc'));
  });

  it('throws for a prefix that is not in ID_PREFIXES (a programming error)', () => {
    expect(() => idSchema('nope' as IdPrefix)).toThrow(TypeError);
  });

  it('does not mistake a prefix for a longer one', () => {
    expect(idSchema('call').safeParse(`cl_${ulid}`).success).toBe(false);
    expect(idSchema('cl').safeParse(`call_${ulid}`).success).toBe(false);
  });
});

describe('isId and ULID_PATTERN', () => {
  it('tell identifiers apart', () => {
    expect(isId('pc', `pc_${ulid}`)).toBe(true);
    expect(isId('pc', 42)).toBe(false);
    expect(ULID_PATTERN.test(ulid)).toBe(true);
    expect(ULID_PATTERN.test(`${ulid}0`)).toBe(false);
  });
});
