// s3rver@3.7.1 ships no types; this covers what the tests use.
declare module 's3rver' {
  import type { AddressInfo } from 'node:net';

  interface S3rverOptions {
    address?: string;
    port?: number;
    silent?: boolean;
    directory?: string;
    resetOnClose?: boolean;
    allowMismatchedSignatures?: boolean;
    vhostBuckets?: boolean;
    configureBuckets?: { name: string; configs?: (string | Uint8Array)[] }[];
  }

  class S3rver {
    constructor(options?: S3rverOptions);
    /** Starts listening; resolves with the bound address. */
    run(): Promise<AddressInfo>;
    close(): Promise<void>;
  }

  export = S3rver;
}
