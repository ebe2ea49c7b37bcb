/** Internal: JSON answers on a `node:http` response (not a public entry point). */
import type { ServerResponse } from 'node:http';

/** Answers with a JSON body. A 413 closes the connection (the rest of the body is not read). */
export function sendJson(response: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  response.statusCode = status;
  response.setHeader('content-type', 'application/json; charset=utf-8');
  response.setHeader('content-length', Buffer.byteLength(text));
  if (status === 413) response.setHeader('connection', 'close');
  response.end(text);
}
