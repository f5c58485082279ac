import type { Client, ServerCapabilities } from '@modelcontextprotocol/client';

/** The lists a server announces changes of, each with its own `list_changed`. */
export type NotifiedList = 'resources' | 'tools' | 'prompts';

export const NOTIFIED_LISTS: readonly NotifiedList[] = ['resources', 'tools', 'prompts'];

/** The list queries this package keeps. Templates change with the resources list. */
export type ListKind = 'resources' | 'resourceTemplates' | 'tools' | 'prompts';

export const LIST_KINDS: readonly ListKind[] = [
  'resources',
  'resourceTemplates',
  'tools',
  'prompts',
];

/** Which notification keeps a list query fresh. */
export const notifiedBy: Record<ListKind, NotifiedList> = {
  resources: 'resources',
  resourceTemplates: 'resources',
  tools: 'tools',
  prompts: 'prompts',
};

/** The listen filter bit for each notified list (2026-07-28). */
export const filterBit = {
  resources: 'resourcesListChanged',
  tools: 'toolsListChanged',
  prompts: 'promptsListChanged',
} as const satisfies Record<NotifiedList, string>;

export const listChangedMethod: Record<NotifiedList, string> = {
  resources: 'notifications/resources/list_changed',
  tools: 'notifications/tools/list_changed',
  prompts: 'notifications/prompts/list_changed',
};

/** Whether the server declared `<list>.listChanged`. */
export function declaresListChanged(
  capabilities: ServerCapabilities | undefined,
  list: NotifiedList,
): boolean {
  return (capabilities?.[list] as { listChanged?: unknown } | undefined)?.listChanged === true;
}

/**
 * Clients whose tool list the SDK has cached (it validates tool outputs and
 * builds 2026-07-28 tool headers from that cache), or whose first call tried
 * to list and failed: a tool call lists first only where no list query or
 * call has.
 */
export const toolsListed = new WeakSet<Client>();

export interface ListPage<T> {
  items: T[];
  ttlMs: unknown;
}

/** The SDK method that lists each kind (its answer holds the items under the kind's name). */
const LIST_METHOD = {
  resources: 'listResources',
  resourceTemplates: 'listResourceTemplates',
  tools: 'listTools',
  prompts: 'listPrompts',
} as const satisfies Record<ListKind, keyof Client>;

/**
 * Every page of one list. Tools use `cacheMode: 'refresh'` rather than
 * `'bypass'`: the SDK derives `callTool`'s output validation from its own
 * cached `tools/list`, which must stay as fresh as ours.
 */
export async function fetchList(
  client: Client,
  kind: ListKind,
  options: { signal: AbortSignal; timeout: number },
): Promise<ListPage<unknown>> {
  const tools = kind === 'tools';
  const result: { [items: string]: unknown; ttlMs?: unknown } = await client[LIST_METHOD[kind]](
    undefined,
    { cacheMode: tools ? 'refresh' : 'bypass', ...options },
  );
  if (tools) toolsListed.add(client);
  return { items: result[kind] as unknown[], ttlMs: result.ttlMs };
}
