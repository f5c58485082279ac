/**
 * What a view asks of its server, served by the package instead of a raw SDK client: tool calls
 * through `callTool` (as `useCallTool` does), reads and lists from the TanStack cache, and
 * subscriptions as holds in it (viewSubscriptions.ts). Only on the view's own server, only what
 * apps may see, and only what the host allows.
 */
import { ProtocolError, ProtocolErrorCode, type Tool } from '@modelcontextprotocol/client';
import type { AppBridge } from '@modelcontextprotocol/ext-apps/app-bridge';
import type { McpCacheSync } from '../core/mcpCacheSync';
import {
  resourceListQueryOptions,
  resourceTemplatesQueryOptions,
  toolListQueryOptions,
} from '../core/queryOptions';
import { callTool } from '../core/tools';
import type { GuardedTransport } from './guardedTransport';
import { visibleToApps } from './uiResource';
import type { ViewSubscriptions } from './viewSubscriptions';

export const refused = (message: string) =>
  new ProtocolError(ProtocolErrorCode.InvalidRequest, message);

export interface ServerFacingOptions {
  /** The view's own server: the only one it reaches. */
  sync: McpCacheSync;
  subscriptions: ViewSubscriptions;
  /** The view's transport: each handler here keeps its request's in-flight slot until it ends. */
  guard: Pick<GuardedTransport, 'hold'>;
  /** Whether the view may still take holds (false once it failed or closed). */
  live: () => boolean;
  allowToolCall?: (tool: Tool, args: Record<string, unknown> | undefined) => boolean;
  allowResource?: (uri: string) => boolean;
}

export function serveServerFacing(bridge: AppBridge, options: ServerFacingOptions): void {
  const { sync, subscriptions, guard } = options;
  const { queryClient } = sync;
  const scope = { scope: sync.keys.scope };
  const appTool = toolLookup(sync);
  // A host predicate that throws (on a template's braces, say) lets nothing through.
  const permits = (uri: string): boolean => {
    if (!options.allowResource) return true;
    try {
      return !!options.allowResource(uri);
    } catch {
      return false;
    }
  };
  const allowed = (uri: unknown): string => {
    if (typeof uri !== 'string' || uri === '') throw refused('a resource URI must be a string');
    if (!permits(uri)) throw refused(`the host does not let this view read ${uri}`);
    return uri;
  };
  // A read or list the view cancels is not cancelled in the cache: the fetch may be shared with
  // the host's own observers, and the server goes on with it anyway. Its handler (and so its
  // slot) lasts until the fetch ends, at the latest after requestTimeoutMs.
  bridge.oncalltool = guard.hold('tools/call', async (params, context) => {
    const tool = await appTool(params.name);
    if (options.allowToolCall && !options.allowToolCall(tool, params.arguments)) {
      throw refused(`the host does not let this view call "${params.name}"`);
    }
    return callTool(sync, {
      name: params.name,
      ...(params.arguments && { arguments: params.arguments }),
      signal: context.mcpReq.signal,
    });
  });
  bridge.onreadresource = guard.hold('resources/read', async ({ uri }) =>
    queryClient.fetchQuery(sync.resourceQueryOptions(allowed(uri))),
  );
  bridge.setRequestHandler('resources/subscribe', ({ params }) => {
    const uri = allowed(params.uri);
    if (options.live()) subscriptions.subscribe(uri);
    return {};
  });
  bridge.setRequestHandler('resources/unsubscribe', ({ params }) => {
    subscriptions.unsubscribe(params.uri);
    return {};
  });
  // The lists say only what the view may read: a resource by its URI, a template by its text as
  // written (`counter://{id}` for a host that allows `counter://…`), so a template is listed only
  // if the host accepts that text itself; each read of an expansion is still checked on its own.
  bridge.onlistresources = guard.hold('resources/list', async () => ({
    resources: (await queryClient.fetchQuery(resourceListQueryOptions(scope))).filter((resource) =>
      permits(resource.uri),
    ),
  }));
  bridge.onlistresourcetemplates = guard.hold('resources/templates/list', async () => ({
    resourceTemplates: (await queryClient.fetchQuery(resourceTemplatesQueryOptions(scope))).filter(
      (template) => permits(template.uriTemplate),
    ),
  }));
}

/**
 * A tool of the view's own server that apps may call. An unknown name refreshes the list once
 * per view (it may be newer than the cache), never more: a view cannot make the host list tools
 * in a loop.
 */
function toolLookup(sync: McpCacheSync): (name: string) => Promise<Tool> {
  let refreshed = false;
  const options = toolListQueryOptions({ scope: sync.keys.scope });
  return async (name) => {
    let tools = await sync.queryClient.ensureQueryData(options);
    if (!tools.some((tool) => tool.name === name) && !refreshed) {
      refreshed = true;
      tools = await sync.queryClient.fetchQuery({ ...options, staleTime: 0 });
    }
    const tool = tools.find((entry) => entry.name === name);
    if (!tool) {
      throw new ProtocolError(ProtocolErrorCode.InvalidParams, `no tool "${name}" on this server`);
    }
    if (!visibleToApps(tool)) {
      throw refused(`tool "${name}" is not visible to apps (_meta.ui.visibility)`);
    }
    return tool;
  };
}
