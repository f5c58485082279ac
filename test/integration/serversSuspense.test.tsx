/** @vitest-environment jsdom */
/**
 * A `<Suspense>` boundary above `<McpServersProvider>` (an app's root boundary, a lazy route)
 * and a stored server read with `useSuspenseResource(uri, { scope: id })`: the provider's first
 * render suspends on that read, so it commits, and its manager mounts, only once the read has
 * data. The read must not wait for that mount: it starts its server's connection itself, the
 * manager that commits takes over, and nothing of the render React threw away stays open on the
 * server. Every wait ends with data or an error, also when the server refuses.
 */
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { act, cleanup, render, screen } from '@testing-library/react';
import { StrictMode, Suspense } from 'react';
import { afterEach, describe, expect, it } from 'vitest';
import { useSuspenseResource } from '../../src';
import { memoryStorage } from '../../src/auth';
import { McpServersProvider, useMcpServers } from '../../src/servers';
import { startTamperProxy } from '../servers';
import { Boundary } from '../support/boundary';
import { ERA_CASES } from '../support/eras';
import { atEnd, closeAll, DOC, FAST, openManager, serverOf } from '../support/manager';
import { eventually } from '../support/wait';

afterEach(async () => {
  cleanup();
  await closeAll();
});

function SuspenseDoc({ scope }: { scope: string }) {
  const content = useSuspenseResource(DOC, { scope }).data.contents[0];
  const status = useMcpServers().servers.find((server) => server.id === scope)?.status;
  return (
    <div data-testid="text" data-status={status}>
      {content && 'text' in content ? content.text : ''}
    </div>
  );
}

/** A list stored by an earlier visit: the page comes back with it. */
async function stored(url: string) {
  const storage = memoryStorage();
  const before = openManager({ storage });
  before.manager.add({ id: 'docs', name: 'Docs', url });
  await before.close();
  return storage;
}

/** The boundaries above the provider, as an app's root would have them. */
async function app(url: string, strict = false) {
  const storage = await stored(url);
  const queryClient = new QueryClient({ defaultOptions: { queries: { retryDelay: 10 } } });
  atEnd(() => queryClient.clear());
  const tree = (
    <QueryClientProvider client={queryClient}>
      <Boundary>
        <Suspense fallback={<div data-testid="fallback">loading</div>}>
          <McpServersProvider storage={storage} channel={null} reconnect={FAST} lingerMs={20}>
            <SuspenseDoc scope="docs" />
          </McpServersProvider>
        </Suspense>
      </Boundary>
    </QueryClientProvider>
  );
  return strict ? <StrictMode>{tree}</StrictMode> : tree;
}

/** Well within requestTimeoutMs (30 s), which is all a read waiting for a mount used to get. */
const SOON = { timeout: 3000 };

describe.each(ERA_CASES)('a Suspense boundary above McpServersProvider ($kind)', ({ kind }) => {
  it.each([
    ['', false],
    [' in StrictMode', true],
  ])(
    'a stored server’s first read loads, stays live, and one connection is left%s',
    async (_, strict) => {
      const server = await serverOf(kind, 'docs');
      render(await app(server.url, strict));
      expect(screen.getByTestId('fallback')).toBeTruthy();
      await eventually(() => expect(screen.getByTestId('text').textContent).toBe('docs doc'), SOON);
      // The connection of the render React threw away ends; the mounted manager's stays.
      await eventually(() => expect(screen.getByTestId('text').dataset.status).toBe('ready'));
      await eventually(() => expect(server.openStreams()).toBe(1));
      if (kind !== 'modern') await eventually(() => expect(server.liveSessions()).toBe(1));
      await eventually(() => expect(server.subscribedUris()).toEqual([DOC]));
      act(() => server.setText(DOC, 'docs doc v2'));
      await eventually(() => expect(screen.getByTestId('text').textContent).toBe('docs doc v2'));
      expect(server.openStreams()).toBe(1);
    },
  );

  it('a stored server that refuses ends in the error boundary, not in a fallback for good', async () => {
    const server = await serverOf(kind, 'docs');
    const tamper = await startTamperProxy(server.url, { respond: () => ({ status: 404 }) });
    atEnd(() => tamper.close());
    render(await app(tamper.url));
    await eventually(
      () => expect(screen.getByTestId('boundary').textContent).toContain('HTTP 404'),
      SOON,
    );
  });
});
