import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { type ReadTool, runTool, type ToolContext, toolsFor } from '../ai/index.ts';
import { type SearchQuery, search, searchQuerySchema } from '../search/index.ts';

/** A JSON-RPC message or batch (the MCP SDK reads the rest). */
const jsonRpcMessage = z.looseObject({ jsonrpc: z.literal('2.0') });
const jsonRpcBodySchema = z.union([jsonRpcMessage, z.array(jsonRpcMessage).min(1)]);

/** The MCP server's name and version, as clients see them in `initialize`. */
const SERVER_INFO = { name: 'svc', version: '0.2.0' };

/** The search tool: `POST /v1/search`'s query, sessions by default. */
const searchTool: ReadTool<typeof searchQuerySchema> = {
  name: 'search_sessions',
  title: 'Search sessions (and calls and issues)',
  description:
    'Search the project: free text and filters over sessions (and, with `types`, calls and issues), ranked, paginated. Sessions only unless `types` says otherwise.',
  input: searchQuerySchema,
  scopes: ['sessions:read'],
  run: (context, query: SearchQuery) =>
    search(
      context.database,
      { projectId: context.project.id, scopes: context.scopes },
      { ...query, types: query.types ?? ['session'] },
    ),
};

/** An MCP server whose tools are those the caller's scopes allow, each run for the caller's project. */
function serverFor(context: ToolContext): McpServer {
  const server = new McpServer(SERVER_INFO, {
    instructions:
      'Read-only tools over recorded web sessions, WebRTC calls and issues of one project. Transcripts cite evidence ids in brackets: quote them. Masked content is never available.',
  });
  for (const tool of [...toolsFor(context.scopes, [searchTool]), ...toolsFor(context.scopes)]) {
    server.registerTool(
      tool.name,
      {
        title: tool.title,
        description: tool.description,
        inputSchema: tool.input,
        annotations: { readOnlyHint: true, openWorldHint: false },
      },
      async (input: unknown) => {
        const output = await runTool(tool, context, input);
        const failed = typeof output === 'object' && output !== null && 'error' in output;
        return {
          content: [{ type: 'text' as const, text: JSON.stringify(output) }],
          ...(failed ? { isError: true } : {}),
        };
      },
    );
  }
  return server;
}

/**
 * `/mcp`: a Streamable HTTP MCP endpoint (stateless: each POST is answered on its own) with the
 * read-only tools of tools.ts and search, those the caller's scopes allow, scoped to the project of
 * its Bearer token (or of the dashboard's cookie and `X-Service-Project`). A caller needs one of
 * `sessions:read`, `calls:read`, `issues:read`; none is a 401 with `WWW-Authenticate: Bearer`.
 * What the tools answer is scrubbed like anything meant for a model. servers/api/README.md, MCP.
 */
export default async function mcpRoutes(fastify: FastifyInstance) {
  fastify.addHook('onRequest', fastify.authorize('sessions'));
  fastify.addHook('onSend', async (_request, reply, payload) => {
    if (reply.statusCode === 401)
      reply.header('www-authenticate', 'Bearer realm="svc", error="invalid_token"');
    return payload;
  });
  const config = { anyScope: ['sessions:read', 'calls:read', 'issues:read'] as const };

  fastify.post(
    '/mcp',
    {
      config,
      schema: {
        summary:
          'MCP (Streamable HTTP): the JSON-RPC requests of an MCP client, which accepts application/json and text/event-stream',
        body: jsonRpcBodySchema,
      },
    },
    async (request: FastifyRequest, reply: FastifyReply) => {
      const context: ToolContext = {
        database: fastify.database,
        blobStore: fastify.blobStore,
        masterKey: fastify.masterKey,
        log: request.log,
        project: request.auth.project,
        scopes: request.auth.scopes,
      };
      const server = serverFor(context);
      const transport = new StreamableHTTPServerTransport({
        sessionIdGenerator: undefined,
        enableJsonResponse: true,
      });
      reply.hijack();
      reply.raw.on('close', () => {
        void transport.close();
        void server.close();
      });
      await server.connect(transport);
      await transport.handleRequest(request.raw, reply.raw, request.body);
    },
  );

  // Stateless: no server-initiated stream to open, no session to end.
  for (const method of ['GET', 'DELETE'] as const) {
    fastify.route({
      method,
      url: '/mcp',
      config,
      // Not API routes: the transport's own answers (the OpenAPI document leaves them out).
      schema: { hide: true },
      handler: async (_request, reply) =>
        reply
          .code(405)
          .header('allow', 'POST')
          .send({ error: 'This MCP endpoint is stateless: POST JSON-RPC requests to it', code: 'invalid' }),
    });
  }
}
