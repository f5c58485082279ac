import type { ReadResourceResult } from '@modelcontextprotocol/client';
import { QueryObserver } from '@tanstack/query-core';
import type { McpCacheSync } from '../../src/core/mcpCacheSync';
import { liveMeta } from '../../src/react/liveMeta';

/** What `useResource` does, without React: a mounted query observer (which holds the URI). */
export function observeResource(sync: McpCacheSync, uri: string, { subscribe = true } = {}) {
  const observer = new QueryObserver<ReadResourceResult>(sync.queryClient, {
    ...sync.resourceQueryOptions(uri),
    // As useResource(uri, { subscribe }) builds it: `false` holds no subscription.
    meta: liveMeta(undefined, subscribe),
  });
  const stop = observer.subscribe(() => {});
  return {
    observer,
    result: () => observer.getCurrentResult(),
    text: () => {
      const content = observer.getCurrentResult().data?.contents[0];
      return content && 'text' in content ? content.text : undefined;
    },
    unmount: stop,
  };
}

export function observeList(sync: McpCacheSync) {
  const observer = new QueryObserver(sync.queryClient, sync.resourceListQueryOptions());
  const stop = observer.subscribe(() => {});
  return {
    observer,
    uris: () => observer.getCurrentResult().data?.map((resource) => resource.uri),
    unmount: stop,
  };
}
