// Search: one ranked query over a project's sessions, calls and issues (`POST /v1/search`), for
// the API, the MCP endpoint's search tool and the model's tool calls.
// Other modules import this module only through this file (servers/api/README.md, Layout).

export { type SearchQuery, searchQuerySchema } from './query.ts';
export type { InterpretQuestion } from './routes.ts';
export { type SearchAccess, search } from './search.ts';
export { type SearchAnswer, searchAnswerSchema } from './views.ts';
