import { describe, expect, it } from 'vitest';
import { UsageError } from '../cli.ts';
import { ChunkReadError } from '../modules/sessions/chunk-reader.ts';
import { BlobStoreError } from './blob-store/blob-store.ts';
import { DurableWriteError } from './blob-store/durable-file-writer.ts';
import { ConfigurationError } from './config.ts';
import { EncryptionError } from './crypto/encryption-error.ts';
import { DataDirectoryLockedError } from './data-directory-lock.ts';
import { ApiError } from './http/errors.ts';

// Every error class of the server has ApiError's shape: one options object (with `cause`), a
// `name`, and a Symbol.for marker that `isInstance` checks (servers/api/README.md, Layout).

interface ErrorClass {
  name: string;
  isInstance(value: unknown): boolean;
  /** An instance from options, with `cause` when given. */
  make(cause?: unknown): Error;
  /** Fields the callers read, as the options above give them. */
  fields: Record<string, unknown>;
}

const classes: ErrorClass[] = [
  {
    name: 'ApiError',
    isInstance: ApiError.isInstance,
    make: (cause) => new ApiError({ status: 409, code: 'invalid', message: 'In use', cause }),
    fields: { status: 409, code: 'invalid', message: 'In use' },
  },
  {
    name: 'EncryptionError',
    isInstance: EncryptionError.isInstance,
    make: (cause) => new EncryptionError({ code: 'corrupt', message: 'The sealed blob is truncated', cause }),
    fields: { code: 'corrupt', message: 'The sealed blob is truncated' },
  },
  {
    name: 'ConfigurationError',
    isInstance: ConfigurationError.isInstance,
    make: (cause) => new ConfigurationError({ problems: ['PORT: too big', 'HOST: empty'], cause }),
    fields: {
      problems: ['PORT: too big', 'HOST: empty'],
      message: 'Invalid configuration:\n  - PORT: too big\n  - HOST: empty',
    },
  },
  {
    name: 'DataDirectoryLockedError',
    isInstance: DataDirectoryLockedError.isInstance,
    make: (cause) => new DataDirectoryLockedError({ directory: '/data', pid: 4242, cause }),
    fields: {
      directory: '/data',
      pid: 4242,
      message:
        'The data directory /data is in use by process 4242 (a running server?). The embedded store ' +
        '(PGlite) can be opened by one process at a time: stop the server first, or run against ' +
        'PostgreSQL (DATABASE_URL) to use the CLI while servers run.',
    },
  },
  {
    name: 'BlobStoreError',
    isInstance: BlobStoreError.isInstance,
    make: (cause) => new BlobStoreError({ code: 'unavailable', message: 'Cannot write blob a/b', cause }),
    fields: { code: 'unavailable', message: 'Cannot write blob a/b' },
  },
  {
    name: 'DurableWriteError',
    isInstance: DurableWriteError.isInstance,
    make: (cause) => new DurableWriteError({ stage: 'open', code: 'EEXIST', message: 'EEXIST', cause }),
    fields: { stage: 'open', code: 'EEXIST', message: 'EEXIST' },
  },
  {
    name: 'ChunkReadError',
    isInstance: ChunkReadError.isInstance,
    make: (cause) => new ChunkReadError({ message: 'Chunk s/1 is not JSON', cause }),
    fields: { message: 'Chunk s/1 is not JSON' },
  },
  {
    name: 'UsageError',
    isInstance: UsageError.isInstance,
    make: (cause) => new UsageError({ message: '--name is required', cause }),
    fields: { message: '--name is required' },
  },
];

describe.each(classes)('$name', ({ name, isInstance, make, fields }) => {
  it('is made from one options object, with its name and fields', () => {
    const error = make();
    expect(error).toBeInstanceOf(Error);
    expect(error.name).toBe(name);
    expect(error).toMatchObject(fields);
    expect('cause' in error).toBe(false);
  });

  it('keeps the cause', () => {
    const cause = new Error('underneath');
    expect(make(cause).cause).toBe(cause);
  });

  it('is recognised by its Symbol.for marker, also from another copy of the module', () => {
    expect(isInstance(make())).toBe(true);
    const foreign = Object.assign(new Error('from another copy'), {
      [Symbol.for(`@svc/api.${name}`)]: true,
    });
    expect(isInstance(foreign)).toBe(true);
  });

  it('refuses a plain Error, a look-alike without the marker and non-objects', () => {
    const lookAlike = Object.assign(new Error(String(fields.message)), { name, ...fields });
    for (const value of [new Error('plain'), lookAlike, { ...fields, name }, null, undefined, name])
      expect(isInstance(value)).toBe(false);
  });

  it('refuses the other classes', () => {
    for (const other of classes) {
      if (other.name !== name) expect(isInstance(other.make())).toBe(false);
    }
  });
});
