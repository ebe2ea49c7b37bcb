// MCP: the read-only tools of the project's data for MCP clients (`/mcp`, Streamable HTTP).
// Nothing imports this module: the composition (app.ts) registers its routes.
// Other modules import this module only through this file (servers/api/README.md, Layout).

export {};
