/**
 * A real HTTP receiver on 127.0.0.1 standing in for `POST /v1/sourcemaps`: it parses each
 * multipart body with the Fetch API's own parser and answers what the test scripts
 * (by default 201 with the server's response shape).
 */
import { once } from 'node:events';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedUpload {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  fields: Record<string, string>;
  files: { field: string; name: string; content: string }[];
}

export interface Answer {
  status: number;
  body: string;
}

export interface Receiver {
  url: string;
  uploads: ReceivedUpload[];
  /** Answers to give, in order; once spent, the default answer (201, the files stored). */
  answers: Answer[];
  close(): Promise<void>;
}

export async function startReceiver(): Promise<Receiver> {
  const uploads: ReceivedUpload[] = [];
  const answers: Answer[] = [];
  const server = createServer(async (request, response) => {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const form = await new Request('http://receiver/', {
      method: 'POST',
      headers: { 'content-type': request.headers['content-type'] ?? '' },
      body: Buffer.concat(chunks),
    }).formData();
    const upload: ReceivedUpload = {
      method: request.method ?? '',
      path: request.url ?? '',
      headers: request.headers,
      fields: {},
      files: [],
    };
    for (const [field, value] of form.entries()) {
      if (typeof value === 'string') upload.fields[field] = value;
      else upload.files.push({ field, name: value.name, content: await value.text() });
    }
    uploads.push(upload);
    const answer = answers.shift() ?? {
      status: 201,
      body: JSON.stringify({
        ...(upload.fields.release === undefined ? {} : { release: upload.fields.release }),
        items: upload.files.map((file, index) => ({
          id: `smf_${uploads.length}_${index}`,
          url: `${upload.fields.urlPrefix ?? '~/'}${file.name}`,
          kind: file.name.endsWith('.map') ? 'map' : 'bundle',
          size: Buffer.byteLength(file.content),
          sha256: '0'.repeat(64),
        })),
      }),
    };
    response.writeHead(answer.status, { 'content-type': 'application/json' }).end(answer.body);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    uploads,
    answers,
    close: () =>
      new Promise<void>((done) => {
        server.closeAllConnections();
        server.close(() => done());
      }),
  };
}
