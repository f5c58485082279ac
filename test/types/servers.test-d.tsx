/**
 * `mcp-react-query/servers`: the manager's results narrow on `ok`, the lists across servers
 * carry the SDK's own item types, and nothing of it reaches the main entry.
 */
import type { CallToolResult, Prompt, Resource, Tool } from '@modelcontextprotocol/client';
import { expectTypeOf } from 'expect-type';
import * as main from 'mcp-react-query';
import {
  type AddServerResult,
  createServerSignIn,
  type McpServer,
  McpServersProvider,
  type Qualified,
  type ServerConfigProblem,
  type ServerElicitation,
  useCallServerTool,
  useMcpServers,
  useServerElicitations,
  useServerPrompts,
  useServerResources,
  useServerTools,
} from 'mcp-react-query/servers';

expectTypeOf(main).not.toHaveProperty('McpServersProvider');
expectTypeOf(main).not.toHaveProperty('useMcpServers');

declare const result: AddServerResult;
if (result.ok) {
  expectTypeOf(result.server).toEqualTypeOf<McpServer>();
} else {
  expectTypeOf(result.problem).toExtend<ServerConfigProblem>();
  expectTypeOf(result.message).toEqualTypeOf<string>();
}

export function Host() {
  const { servers, add, update, remove } = useMcpServers();
  expectTypeOf(servers).toEqualTypeOf<readonly McpServer[]>();
  expectTypeOf(add).returns.toEqualTypeOf<AddServerResult>();
  expectTypeOf(update).parameter(0).toEqualTypeOf<string>();
  expectTypeOf(remove).returns.toEqualTypeOf<Promise<boolean>>();
  expectTypeOf(servers[0]?.status).toEqualTypeOf<main.McpStatus | undefined>();

  const { tools } = useServerTools();
  expectTypeOf(tools).toEqualTypeOf<readonly Qualified<Tool>[]>();
  expectTypeOf(useServerPrompts().prompts[0]?.item).toEqualTypeOf<Prompt | undefined>();
  expectTypeOf(useServerResources().servers[0]?.items).toEqualTypeOf<
    readonly Resource[] | undefined
  >();
  const call = useCallServerTool();
  expectTypeOf(call.mutateAsync).returns.resolves.toEqualTypeOf<CallToolResult>();
  expectTypeOf(useServerElicitations()[0]?.serverId).toEqualTypeOf<string | undefined>();
  expectTypeOf<ServerElicitation>().toExtend<main.PendingElicitation>();
  return null;
}

export const app = (
  <McpServersProvider
    signIn={createServerSignIn({ redirectUrl: '/callback' })}
    serverRequests={{ elicitation: true }}
    separator="."
  >
    <Host />
  </McpServersProvider>
);
// @ts-expect-error a ServerRequests object is per connection: the provider takes its options
export const wrong = <McpServersProvider serverRequests={main.createServerRequests({})} />;
