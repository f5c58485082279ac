/** The reference server's factory (`@modelcontextprotocol/server-everything` ships no types). */
declare module '@modelcontextprotocol/server-everything/dist/server/index.js' {
  import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';

  export function createServer(): {
    server: McpServer;
    cleanup(sessionId: string | undefined): void;
  };
}
