/**
 * What the hooks return, as an app sees it. A regression here is a silent `any` or `unknown`
 * in someone's component, which no runtime test notices.
 */
import type {
  CallToolResult,
  Prompt,
  ReadResourceResult,
  Resource,
  ResourceTemplateType,
  Tool,
} from '@modelcontextprotocol/client';
import { expectTypeOf } from 'expect-type';
import {
  type Era,
  type McpEvent,
  type McpStatus,
  useCallTool,
  useMcp,
  useMcpEvents,
  usePromptList,
  useResource,
  useResourceList,
  useResourceTemplates,
  useSuspenseResource,
  useSuspenseResourceList,
  useToolList,
} from 'mcp-react-query';

// Never called: tsc checks the types, nothing renders.
export function Hooks() {
  const resource = useResource('config://app');
  expectTypeOf(resource.data).toEqualTypeOf<ReadResourceResult | undefined>();
  expectTypeOf(resource.error).toEqualTypeOf<Error | null>();

  // `select` decides TData, and only TData.
  const length = useResource('config://app', { select: (r) => r.contents.length });
  expectTypeOf(length.data).toEqualTypeOf<number | undefined>();
  useResource('config://app', {
    select: (r) => {
      expectTypeOf(r).toEqualTypeOf<ReadResourceResult>();
      return r;
    },
  });
  // The package's own options sit beside TanStack's; unknown ones are errors.
  useResource('config://app', { subscribe: false, scope: 'a', staleTime: 1000 });
  // @ts-expect-error not an option
  useResource('config://app', { subscrbe: false });
  // @ts-expect-error the key and query function belong to the package
  useResource('config://app', { queryKey: ['x'] });

  const list = useResourceList();
  expectTypeOf(list.data).toEqualTypeOf<Resource[] | undefined>();
  const uris = useResourceList({ select: (resources) => resources.map((r) => r.uri) });
  expectTypeOf(uris.data).toEqualTypeOf<string[] | undefined>();

  expectTypeOf(useToolList().data).toEqualTypeOf<Tool[] | undefined>();
  expectTypeOf(usePromptList().data).toEqualTypeOf<Prompt[] | undefined>();
  expectTypeOf(useResourceTemplates().data).toEqualTypeOf<ResourceTemplateType[] | undefined>();
  // Tool calls through another provider take its scope, like every hook (TanStack's own
  // mutation `scope` object would collide with it, so it is not an option here).
  expectTypeOf(useCallTool({ scope: 'b' }).data).toEqualTypeOf<CallToolResult | undefined>();
  const names = useToolList({ select: (tools) => tools.map((t) => t.name) });
  expectTypeOf(names.data).toEqualTypeOf<string[] | undefined>();

  // Suspense: data is there once rendered.
  expectTypeOf(useSuspenseResource('config://app').data).toEqualTypeOf<ReadResourceResult>();
  const text = useSuspenseResource('config://app', { select: (r) => r.contents[0]?.uri });
  expectTypeOf(text.data).toEqualTypeOf<string | undefined>();
  expectTypeOf(useSuspenseResourceList().data).toEqualTypeOf<Resource[]>();

  const mcp = useMcp();
  expectTypeOf(mcp.status).toEqualTypeOf<McpStatus>();
  expectTypeOf<McpStatus>().toEqualTypeOf<
    'connecting' | 'ready' | 'reconnecting' | 'unauthorized' | 'error' | 'closed'
  >();
  expectTypeOf(mcp.era).toEqualTypeOf<Era | undefined>();
  expectTypeOf<Era>().toEqualTypeOf<'modern' | 'legacy'>();
  expectTypeOf(mcp.reconnect).toEqualTypeOf<() => void>();
  expectTypeOf(useMcp('scope-b')).toEqualTypeOf(mcp);

  useMcpEvents((event) => {
    expectTypeOf(event).toEqualTypeOf<McpEvent>();
    if (event.type === 'updated') expectTypeOf(event.uri).toEqualTypeOf<string>();
  });
  return null;
}
