/**
 * Two providers of one server on one QueryClient and scope (an app's provider and a widget's
 * own, say): the one mounted later serves the scope's queries; once it unmounts, the other one
 * serves them again, so what it shows stays live. Against the three real servers.
 */
import { QueryClient } from '@tanstack/query-core';
import { afterEach, describe, expect, it } from 'vitest';
import { McpCacheSync } from '../../src/core/mcpCacheSync';
import { atEnd, closeAll } from '../support/atEnd';
import { ERA_CASES, start, text } from '../support/eras';
import { observeResource } from '../support/observe';
import { eventually } from '../support/wait';

const URI = 'config://app';

afterEach(closeAll);

describe.each(ERA_CASES)('one scope, two providers ($kind)', ({ kind }) => {
  it('the provider mounted first stays live after the one mounted later unmounts', async () => {
    const server = await start(kind);
    atEnd(() => server.close());
    server.store.upsert(text(URI, 'v1'));
    const queryClient = new QueryClient({ defaultOptions: { queries: { retryDelay: 10 } } });
    atEnd(() => queryClient.clear());
    const open = () => {
      const sync = new McpCacheSync({ queryClient, url: server.url, lingerMs: 30 });
      const release = sync.mount();
      atEnd(() => sync.dispose());
      return { sync, release };
    };
    const first = open();
    const view = observeResource(first.sync, URI);
    atEnd(view.unmount);
    await eventually(() => expect(view.text()).toBe('v1'));

    const second = open();
    server.setText(URI, 'v2');
    await eventually(() => expect(view.text()).toBe('v2'));

    second.release();
    await second.sync.dispose();
    server.setText(URI, 'v3');
    await eventually(() => expect(view.text()).toBe('v3'));
    // Reads go out again too: a refetch is answered, not left waiting for a provider.
    server.setText(URI, 'v4');
    await view.observer.refetch();
    expect(view.text()).toBe('v4');
  });
});
