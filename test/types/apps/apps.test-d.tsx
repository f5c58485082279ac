/**
 * `mcp-react-query/apps` and `/apps/sandbox` as an app sees them. In a folder of its own: the
 * consumer app of check:example copies the top-level type tests only, and does not install the
 * optional peer `@modelcontextprotocol/ext-apps` these types come from.
 */
import type { CallToolResult, Tool } from '@modelcontextprotocol/client';
import { expectTypeOf } from 'expect-type';
import { createServerRequests } from 'mcp-react-query';
import {
  MCP_APPS_EXTENSION,
  McpApp,
  McpAppError,
  type McpAppErrorCode,
  type McpAppProps,
} from 'mcp-react-query/apps';
import { type SandboxProxyResponse, sandboxProxyResponse } from 'mcp-react-query/apps/sandbox';

declare const tool: Tool;
declare const result: CallToolResult;

export const byName = <McpApp tool="get-time" sandbox="https://sandbox.example.com/" />;
export const full = (
  <McpApp
    tool={tool}
    scope="b"
    input={{ city: 'Oslo' }}
    partialInput={{ ci: 'O' }}
    result={result}
    cancelled="stopped"
    sandbox={new URL('https://sandbox.example.com/')}
    hostContext={{ theme: 'dark', displayMode: 'inline' }}
    limits={{ burst: 50, perSecond: 5, inFlight: 4, subscriptions: 8 }}
    onOpenLink={async (url) => url.startsWith('https://')}
    onMessage={(params) => {
      expectTypeOf(params.role).toEqualTypeOf<'user'>();
      return undefined;
    }}
    onError={(error) => expectTypeOf(error.code).toEqualTypeOf<McpAppErrorCode>()}
  />
);
// @ts-expect-error a view runs only in a sandbox: the URL is required
export const noSandbox = <McpApp tool="get-time" />;
// @ts-expect-error a link is approved with a boolean, not with anything truthy
export const sloppy = <McpApp tool="t" sandbox="https://s/" onOpenLink={() => 'yes'} />;

expectTypeOf<McpAppProps['tool']>().toEqualTypeOf<string | Tool>();
expectTypeOf(new McpAppError('FLOOD', 'x').code).toEqualTypeOf<McpAppErrorCode>();
// The extension is what createServerRequests declares.
createServerRequests({ elicitation: true, extensions: MCP_APPS_EXTENSION });

expectTypeOf(
  sandboxProxyResponse('/sandbox?host=x', { hostOrigins: ['https://app.example.com'] }),
).toEqualTypeOf<SandboxProxyResponse>();
sandboxProxyResponse(new URL('https://s/sandbox'), { hostOrigins: (origin) => origin !== '' });
