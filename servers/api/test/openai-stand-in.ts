import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';

// A stand-in for a hosted model, which cannot run here: a real HTTP server on 127.0.0.1 that
// speaks OpenAI's Chat Completions wire format (`POST /v1/chat/completions`, a JSON answer, or
// server-sent `chat.completion.chunk` events with `stream: true`, tool calls and usage included)
// as OpenAI, vLLM, Ollama and llama.cpp's server do. It records the exact bytes of every request,
// so tests can assert on what would have left the server, and answers what the test scripts.

/** A request the stand-in received. */
export interface StandInRequest {
  path: string;
  headers: IncomingHttpHeaders;
  /** The body exactly as received. */
  raw: string;
  // biome-ignore lint/suspicious/noExplicitAny: the request's JSON, as the tests read it
  body: any;
}

/** What the stand-in answers a request. */
export interface StandInReply {
  text?: string;
  toolCalls?: Array<{ name: string; arguments: unknown }>;
  usage?: { prompt: number; completion: number };
  /** An HTTP error instead (the body is OpenAI's error shape). */
  status?: number;
}

export interface OpenAiStandIn {
  /** The base URL a client is configured with (`http://127.0.0.1:<port>/v1`). */
  baseUrl: string;
  received: StandInRequest[];
  /** What to answer next (replaces the previous script). */
  answer(script: (request: StandInRequest) => StandInReply): void;
  close(): Promise<void>;
}

function completion(reply: StandInReply, model: string, id: string) {
  const toolCalls = (reply.toolCalls ?? []).map((call, index) => ({
    id: `call_${id}_${index}`,
    type: 'function',
    function: { name: call.name, arguments: JSON.stringify(call.arguments) },
  }));
  const usage = reply.usage ?? { prompt: 100, completion: 20 };
  return {
    id: `chatcmpl-${id}`,
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model,
    choices: [
      {
        index: 0,
        message: {
          role: 'assistant',
          content: reply.text ?? null,
          ...(toolCalls.length === 0 ? {} : { tool_calls: toolCalls }),
        },
        finish_reason: toolCalls.length === 0 ? 'stop' : 'tool_calls',
      },
    ],
    usage: {
      prompt_tokens: usage.prompt,
      completion_tokens: usage.completion,
      total_tokens: usage.prompt + usage.completion,
    },
  };
}

/** The same answer as `chat.completion.chunk` events: the role, the text word by word, the tool calls, the finish, the usage. */
function chunks(reply: StandInReply, model: string, id: string, includeUsage: boolean): unknown[] {
  const base = {
    id: `chatcmpl-${id}`,
    object: 'chat.completion.chunk',
    created: Math.floor(Date.now() / 1000),
    model,
  };
  const events: unknown[] = [
    { ...base, choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }] },
  ];
  for (const word of (reply.text ?? '').match(/\S+\s*/g) ?? []) {
    events.push({ ...base, choices: [{ index: 0, delta: { content: word }, finish_reason: null }] });
  }
  (reply.toolCalls ?? []).forEach((call, index) => {
    events.push({
      ...base,
      choices: [
        {
          index: 0,
          delta: {
            tool_calls: [
              {
                index,
                id: `call_${id}_${index}`,
                type: 'function',
                function: { name: call.name, arguments: JSON.stringify(call.arguments) },
              },
            ],
          },
          finish_reason: null,
        },
      ],
    });
  });
  events.push({
    ...base,
    choices: [
      { index: 0, delta: {}, finish_reason: (reply.toolCalls ?? []).length === 0 ? 'stop' : 'tool_calls' },
    ],
  });
  const usage = reply.usage ?? { prompt: 100, completion: 20 };
  if (includeUsage) {
    events.push({
      ...base,
      choices: [],
      usage: {
        prompt_tokens: usage.prompt,
        completion_tokens: usage.completion,
        total_tokens: usage.prompt + usage.completion,
      },
    });
  }
  return events;
}

/**
 * Starts the stand-in. Until a test scripts it, it answers "OK" with 100 input and 20 output tokens.
 *
 * @example
 * ```ts
 * const model = await startOpenAiStandIn();
 * model.answer(() => ({ text: 'The call failed [finding:pc_1:webrtc_connect_failure].', usage: { prompt: 1200, completion: 80 } }));
 * ```
 */
export async function startOpenAiStandIn(): Promise<OpenAiStandIn> {
  const received: StandInRequest[] = [];
  let script: (request: StandInRequest) => StandInReply = () => ({ text: 'OK' });
  let counter = 0;
  const server: Server = createServer((request, response) => {
    const parts: Buffer[] = [];
    request.on('data', (part: Buffer) => parts.push(part));
    request.on('end', () => {
      const raw = Buffer.concat(parts).toString('utf8');
      let body: unknown = null;
      try {
        body = JSON.parse(raw);
      } catch {}
      const entry: StandInRequest = { path: request.url ?? '', headers: request.headers, raw, body };
      received.push(entry);
      if (request.method !== 'POST' || entry.path !== '/v1/chat/completions') {
        response
          .writeHead(404, { 'content-type': 'application/json' })
          .end('{"error":{"message":"not found"}}');
        return;
      }
      const reply = script(entry);
      if (reply.status !== undefined) {
        response
          .writeHead(reply.status, { 'content-type': 'application/json' })
          .end(JSON.stringify({ error: { message: 'The stand-in was told to fail', type: 'server_error' } }));
        return;
      }
      counter += 1;
      const id = String(counter);
      const model = String((body as { model?: unknown })?.model ?? 'model');
      if ((body as { stream?: unknown })?.stream === true) {
        const includeUsage =
          (body as { stream_options?: { include_usage?: unknown } }).stream_options?.include_usage === true;
        response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
        for (const event of chunks(reply, model, id, includeUsage))
          response.write(`data: ${JSON.stringify(event)}\n\n`);
        response.end('data: [DONE]\n\n');
        return;
      }
      response
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify(completion(reply, model, id)));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no address');
  return {
    baseUrl: `http://127.0.0.1:${address.port}/v1`,
    received,
    answer(next) {
      script = next;
    },
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
