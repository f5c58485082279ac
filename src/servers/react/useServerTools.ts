import type { Prompt, Resource, Tool } from '@modelcontextprotocol/client';
import { useMemo } from 'react';
import { type Qualified, qualify } from '../qualify';
import { useServerManager } from './context';
import { type ServerList, type ServerListState, useServerLists } from './useServerLists';

export interface ServerToolsResult {
  /** Every server's tools under qualified names (`server__tool`), servers in the order added. */
  tools: readonly Qualified<Tool>[];
  /** Each server's list state: pending, failed (with why), or there. */
  servers: readonly ServerListState[];
}

export interface ServerPromptsResult {
  prompts: readonly Qualified<Prompt>[];
  servers: readonly ServerListState[];
}

export interface ServerResourcesResult {
  /** Each server's resources, grouped (a URI means something only on its own server). */
  servers: readonly ServerList<Resource>[];
}

function useQualified<T extends { name: string }>(hook: string, kind: 'tools' | 'prompts') {
  const { separator } = useServerManager(hook);
  const lists = useServerLists<T>(hook, kind);
  const items = useMemo(
    () =>
      qualify(
        lists.map((list) => ({
          server: { id: list.serverId, name: list.serverName },
          items: list.items,
        })),
        separator,
      ),
    [lists, separator],
  );
  return { items, lists };
}

/**
 * Every server's tools in one list, each with its server and a
 * collision-safe qualified name to show a model and to call with
 * (`useCallServerTool`). Kept live by each server's `tools/list_changed`.
 */
export function useServerTools(): ServerToolsResult {
  const { items, lists } = useQualified<Tool>('useServerTools', 'tools');
  return { tools: items, servers: lists };
}

/** Every server's prompts in one list, under qualified names like the tools'. */
export function useServerPrompts(): ServerPromptsResult {
  const { items, lists } = useQualified<Prompt>('useServerPrompts', 'prompts');
  return { prompts: items, servers: lists };
}

/** Every server's resource list, grouped by server; read one with `useResource(uri, { scope })`. */
export function useServerResources(): ServerResourcesResult {
  return { servers: useServerLists<Resource>('useServerResources', 'resources') };
}
