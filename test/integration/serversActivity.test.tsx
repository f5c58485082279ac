/** @vitest-environment jsdom */
/**
 * `<McpServersProvider>` inside React's `<Activity>` (React 19.2+; a kept-alive route or tab):
 * hidden, its effects are cleaned up, so every server's connection ends (nothing stays open on
 * a server); shown again, its effects come back with the manager it had, which connects every
 * server again rather than throwing DISPOSED into the tree. A server added while hidden (by a
 * handler of the hidden tree, or by another tab) is kept, and connects once shown.
 */
import type { ReadResourceResult } from '@modelcontextprotocol/client';
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { act, cleanup, fireEvent, render, screen } from '@testing-library/react';
import { Activity, StrictMode } from 'react';
import { afterEach, describe, expect, it } from 'vitest';
import { useResource } from '../../src';
import { memoryStorage } from '../../src/auth';
import { McpServersProvider, type UseMcpServersResult, useMcpServers } from '../../src/servers';
import type { TestServer } from '../servers';
import { ERA_CASES } from '../support/eras';
import { atEnd, closeAll, DOC, FAST, idle, openManager, serverOf } from '../support/manager';
import { eventually } from '../support/wait';

afterEach(async () => {
  cleanup();
  await closeAll();
});

const textOf = (result: ReadResourceResult | undefined) => {
  const content = result?.contents[0];
  return content && 'text' in content ? content.text : '…';
};

function Doc({ scope }: { scope: string }) {
  const doc = useResource(DOC, { scope });
  return <span data-testid={`doc-${scope}`}>{textOf(doc.data)}</span>;
}

/** What a handler of the tree kept: `add` as it had it when the tree was last shown. */
let kept: UseMcpServersResult['add'] | undefined;

/**
 * Each server's doc, shown whatever its status: one shown only while `ready` would unmount while
 * the server connects again, and the core's interest misses a URI held again while it lingers
 * across a new session's start (reported; src/core/interest.ts).
 */
function ServerList() {
  const { servers, add } = useMcpServers();
  kept = add;
  return (
    <ul>
      {servers.map((server) => (
        <li key={server.id} data-testid={`server-${server.id}`} data-status={server.status}>
          <Doc scope={server.id} />
        </li>
      ))}
      <button type="button" onClick={() => add({ id: 'a', name: 'A', url: urlOfA })}>
        add a
      </button>
    </ul>
  );
}

let urlOfA = '';
const shown = (testId: string) => screen.queryByTestId(testId)?.textContent;
const statusOf = (id: string) => screen.queryByTestId(`server-${id}`)?.dataset.status;

/** The app: an `<Activity>` around the provider, shown or hidden by `show(mode)`. */
function setup(storage = memoryStorage(), strict = false) {
  const queryClient = new QueryClient({ defaultOptions: { queries: { retryDelay: 10 } } });
  atEnd(() => queryClient.clear());
  const ui = (mode: 'hidden' | 'visible') => {
    const tree = (
      <QueryClientProvider client={queryClient}>
        <Activity mode={mode}>
          <McpServersProvider storage={storage} channel={null} reconnect={FAST} lingerMs={20}>
            <ServerList />
          </McpServersProvider>
        </Activity>
      </QueryClientProvider>
    );
    return strict ? <StrictMode>{tree}</StrictMode> : tree;
  };
  const view = render(ui('visible'));
  return { view, show: (mode: 'hidden' | 'visible') => view.rerender(ui(mode)) };
}

/** Each server's stream (and, 2025, session): one, or none. */
function expectOpen(kind: string, servers: TestServer[], count: 0 | 1) {
  expect(servers.map((server) => server.openStreams())).toEqual(servers.map(() => count));
  if (kind !== 'modern') {
    expect(servers.map((server) => server.liveSessions())).toEqual(servers.map(() => count));
  }
}

describe.each(ERA_CASES)('McpServersProvider in an <Activity> ($kind)', ({ kind }) => {
  it.each([
    ['', false],
    [' in StrictMode', true],
  ])(
    'hidden, every connection ends; shown again, each connects and stays live%s',
    async (_, strict) => {
      const a = await serverOf(kind, 'A');
      urlOfA = a.url;
      const { show } = setup(memoryStorage(), strict);
      fireEvent.click(screen.getByText('add a'));
      await eventually(() => expect(shown('doc-a')).toBe('A doc'));
      await eventually(() => expect(a.subscribedUris()).toEqual([DOC]));

      show('hidden');
      await eventually(() => expect(idle(a)).toBe(true));

      show('visible');
      await eventually(() => expect(a.subscribedUris()).toEqual([DOC]));
      expect(shown('doc-a')).toBe('A doc');
      act(() => a.setText(DOC, 'A doc v2'));
      await eventually(() => expect(shown('doc-a')).toBe('A doc v2'));
      await eventually(() => expect(statusOf('a')).toBe('ready'));
      expectOpen(kind, [a], 1);
    },
  );

  it('a server added while hidden (by a handler the tree kept, or another tab) connects once shown', async () => {
    const [a, b, c] = await Promise.all([
      serverOf(kind, 'A'),
      serverOf(kind, 'B'),
      serverOf(kind, 'C'),
    ]);
    urlOfA = a.url;
    const storage = memoryStorage();
    const { view, show } = setup(storage);
    fireEvent.click(screen.getByText('add a'));
    await eventually(() => expect(shown('doc-a')).toBe('A doc'));

    show('hidden');
    await eventually(() => expect(idle(a)).toBe(true));
    let added: ReturnType<NonNullable<typeof kept>> | undefined;
    act(() => {
      added = kept?.({ id: 'b', name: 'B', url: b.url });
    });
    expect(added?.ok).toBe(true);
    const other = openManager({ storage });
    other.manager.add({ id: 'c', name: 'C', url: c.url });
    await other.close();
    // Nothing connects while hidden.
    await eventually(() => expect([idle(a), idle(b), idle(c)]).toEqual([true, true, true]));

    show('visible');
    await eventually(() => {
      expect(shown('doc-a')).toBe('A doc');
      expect(shown('doc-b')).toBe('B doc');
      expect(shown('doc-c')).toBe('C doc');
    });
    for (const server of [a, b, c]) {
      await eventually(() => expect(server.subscribedUris()).toEqual([DOC]));
    }
    act(() => b.setText(DOC, 'B doc v2'));
    await eventually(() => expect(shown('doc-b')).toBe('B doc v2'));
    expectOpen(kind, [a, b, c], 1);

    // Unmounted for good: nothing is left open on any server.
    view.unmount();
    await eventually(() => expect([idle(a), idle(b), idle(c)]).toEqual([true, true, true]));
  });
});
