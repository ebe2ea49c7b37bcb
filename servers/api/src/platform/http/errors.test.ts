import { describe, expect, it } from 'vitest';
import { ApiError, forbidden, invalid, notFound, unauthorized } from './errors.ts';

describe('ApiError', () => {
  it('carries status, wire code, message and cause from one options object', () => {
    const cause = new Error('unique violation');
    const error = new ApiError({ status: 409, code: 'invalid', message: 'Already exists', cause });
    expect(error).toBeInstanceOf(Error);
    expect({ name: error.name, status: error.status, code: error.code, message: error.message }).toEqual({
      name: 'ApiError',
      status: 409,
      code: 'invalid',
      message: 'Already exists',
    });
    expect(error.cause).toBe(cause);
    expect('cause' in new ApiError({ status: 400, code: 'invalid', message: 'x' })).toBe(false);
  });

  it('is recognised by its Symbol.for marker, also from another copy of the module', () => {
    expect(ApiError.isInstance(notFound('No session'))).toBe(true);
    const foreign = Object.assign(new Error('from another copy'), {
      [Symbol.for('@svc/api.ApiError')]: true,
      status: 404,
      code: 'not_found',
    });
    expect(ApiError.isInstance(foreign)).toBe(true);
    for (const value of [new Error('plain'), { status: 404, code: 'not_found' }, null, undefined, 'ApiError'])
      expect(ApiError.isInstance(value)).toBe(false);
  });

  it('keeps the wire code to the spec four and lets the status say the rest', () => {
    expect(
      [unauthorized('a'), forbidden('b'), notFound('c'), invalid('d'), invalid('e', 413)].map((error) => [
        error.status,
        error.code,
      ]),
    ).toEqual([
      [401, 'unauthorized'],
      [403, 'unauthorized'],
      [404, 'not_found'],
      [400, 'invalid'],
      [413, 'invalid'],
    ]);
  });
});
