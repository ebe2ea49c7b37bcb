import { createServer } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { SourcemapsError, type UploadOptions, uploadSourcemaps } from '../src/index.ts';
import { type Receiver, startReceiver } from './receiver.ts';

let receiver: Receiver;
beforeAll(async () => {
  receiver = await startReceiver();
});
afterAll(async () => {
  await receiver.close();
});
beforeEach(() => {
  receiver.uploads.length = 0;
  receiver.answers.length = 0;
});

const files = [
  { name: 'assets/index-4f2a.js', content: 'run();\n//# debugId=85314830-023f-4cf1-a267-535f4e37bb17\n' },
  { name: 'assets/index-4f2a.js.map', content: new TextEncoder().encode('{"version":3}') },
];

function options(overrides: Partial<UploadOptions> = {}): UploadOptions {
  return { url: receiver.url, token: 'svc_test_token', files, retryDelay: 1, ...overrides };
}

async function failure(promise: Promise<unknown>): Promise<SourcemapsError> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  if (!SourcemapsError.isInstance(error)) throw new Error(`expected a SourcemapsError, got ${String(error)}`);
  return error;
}

describe('uploadSourcemaps', () => {
  it('sends the documented multipart shape: fields release and urlPrefix, one part per file named by its path, a Bearer token', async () => {
    const result = await uploadSourcemaps(
      options({ url: `${receiver.url}/`, release: 'shop@1.4.0', urlPrefix: '~/static/' }),
    );
    expect(receiver.uploads).toHaveLength(1);
    const [upload] = receiver.uploads;
    expect(upload?.method).toBe('POST');
    expect(upload?.path).toBe('/v1/sourcemaps');
    expect(upload?.headers.authorization).toBe('Bearer svc_test_token');
    expect(upload?.headers['content-type']).toMatch(/^multipart\/form-data; boundary=/);
    expect(upload?.fields).toEqual({ release: 'shop@1.4.0', urlPrefix: '~/static/' });
    expect(upload?.files).toEqual([
      { field: 'file', name: 'assets/index-4f2a.js', content: files[0]?.content },
      { field: 'file', name: 'assets/index-4f2a.js.map', content: '{"version":3}' },
    ]);
    expect(result).toEqual({
      release: 'shop@1.4.0',
      requests: 1,
      items: [
        expect.objectContaining({ url: '~/static/assets/index-4f2a.js', kind: 'bundle' }),
        expect.objectContaining({ url: '~/static/assets/index-4f2a.js.map', kind: 'map' }),
      ],
    });
  });

  it('sends no release or urlPrefix field when not given, and keeps a base path of the url', async () => {
    await uploadSourcemaps(options({ url: `${receiver.url}/svc` }));
    expect(receiver.uploads[0]?.fields).toEqual({});
    expect(receiver.uploads[0]?.path).toBe('/svc/v1/sourcemaps');
  });

  it('splits an upload over 200 files into several requests, in order', async () => {
    const many = Array.from({ length: 450 }, (_, index) => ({
      name: `chunk-${index}.js`,
      content: `c(${index});`,
    }));
    const result = await uploadSourcemaps(options({ files: many }));
    expect(result.requests).toBe(3);
    expect(receiver.uploads.map((upload) => upload.files.length)).toEqual([200, 200, 50]);
    expect(receiver.uploads.flatMap((upload) => upload.files.map((file) => file.name))).toEqual(
      many.map((file) => file.name),
    );
    expect(result.items).toHaveLength(450);
  });

  it('fails with rejected and the server message on a 4xx, without retrying', async () => {
    receiver.answers.push({
      status: 400,
      body: JSON.stringify({ error: 'The source map "main.js.map" is not JSON (not_json)', code: 'invalid' }),
    });
    const error = await failure(uploadSourcemaps(options()));
    expect(error.code).toBe('rejected');
    expect(error.status).toBe(400);
    expect(error.message).toBe(
      `Uploading 2 files to ${receiver.url}/v1/sourcemaps failed: 400 The source map "main.js.map" is not JSON (not_json) (invalid)`,
    );
    expect(receiver.uploads).toHaveLength(1);

    receiver.answers.push({
      status: 413,
      body: JSON.stringify({ error: 'A file is over 16777216 bytes', code: 'invalid' }),
    });
    expect(await failure(uploadSourcemaps(options()))).toMatchObject({ code: 'rejected', status: 413 });
  });

  it('fails with unauthorized on 401 and 403, naming the scope and never the token', async () => {
    for (const status of [401, 403]) {
      receiver.answers.push({ status, body: JSON.stringify({ error: 'Forbidden', code: 'forbidden' }) });
      const error = await failure(uploadSourcemaps(options()));
      expect(error).toMatchObject({ code: 'unauthorized', status });
      expect(error.message).toContain('sourcemaps:write');
      expect(error.message).not.toContain('svc_test_token');
    }
  });

  it('retries a 5xx, and succeeds when a retry does', async () => {
    receiver.answers.push({ status: 503, body: '<html>Service Unavailable</html>' });
    const result = await uploadSourcemaps(options());
    expect(receiver.uploads).toHaveLength(2);
    expect(result.items).toHaveLength(2);
  });

  it('fails with server_error once the retries are spent', async () => {
    for (let index = 0; index < 3; index += 1) receiver.answers.push({ status: 500, body: '' });
    const error = await failure(uploadSourcemaps(options()));
    expect(error).toMatchObject({ code: 'server_error', status: 500 });
    expect(error.message).toContain('500 (empty body)');
    expect(receiver.uploads).toHaveLength(3);
  });

  it('fails with network_error when nothing answers', async () => {
    // A port that was free a moment ago: connection refused.
    const server = createServer();
    await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
    const { port } = server.address() as { port: number };
    await new Promise<void>((done) => server.close(() => done()));
    const error = await failure(uploadSourcemaps(options({ url: `http://127.0.0.1:${port}`, retries: 1 })));
    expect(error.code).toBe('network_error');
    expect(error.status).toBeUndefined();
    expect(error.message).toMatch(/ECONNREFUSED/);
  });

  it('refuses bad options before sending anything', async () => {
    expect(await failure(uploadSourcemaps(options({ url: 'svc.example.com' })))).toMatchObject({
      code: 'invalid_options',
    });
    expect(await failure(uploadSourcemaps(options({ url: 'ftp://svc.example.com' })))).toMatchObject({
      code: 'invalid_options',
    });
    expect(await failure(uploadSourcemaps(options({ token: ' ' })))).toMatchObject({
      code: 'invalid_options',
    });
    expect(await failure(uploadSourcemaps(options({ files: [] })))).toMatchObject({ code: 'no_files' });
    expect(receiver.uploads).toHaveLength(0);
  });
});
