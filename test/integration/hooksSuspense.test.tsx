/** @vitest-environment jsdom */
/**
 * A `<Suspense>` boundary above `<McpProvider>` (an app's root boundary, a lazy route): the
 * provider's first render suspends on `useSuspenseResource`, so it commits, and mounts, only once
 * the read has data. The read must not wait for that mount: it starts the connection itself, the
 * render that commits takes over, and nothing of the render React threw away stays open on the
 * server. Every wait ends with data or an error, also when the server refuses.
 */
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { act, cleanup, render, screen } from '@testing-library/react';
import { StrictMode, Suspense } from 'react';
import { afterEach, describe, expect, it } from 'vitest';
import { McpProvider, useSuspenseResource } from '../../src';
import { startTamperProxy, type TestServer } from '../servers';
import { atEnd, closeAll } from '../support/atEnd';
import { Boundary } from '../support/boundary';
import { ERA_CASES, serve, text } from '../support/eras';
import { disposeSyncs } from '../support/syncs';
import { eventually, idle } from '../support/wait';

const URI = 'config://app';

afterEach(async () => {
  cleanup();
  await disposeSyncs();
  await closeAll();
});

function SuspenseText() {
  const content = useSuspenseResource(URI).data.contents[0];
  return <div data-testid="text">{content && 'text' in content ? content.text : ''}</div>;
}

function newQueryClient() {
  const queryClient = new QueryClient({ defaultOptions: { queries: { retryDelay: 10 } } });
  atEnd(() => queryClient.clear());
  return queryClient;
}

/** The boundaries above the provider, as an app's root would have them. */
function app(queryClient: QueryClient, url: string, strict = false) {
  const tree = (
    <QueryClientProvider client={queryClient}>
      <Boundary>
        <Suspense fallback={<div data-testid="fallback">loading</div>}>
          <McpProvider url={url} lingerMs={20}>
            <SuspenseText />
          </McpProvider>
        </Suspense>
      </Boundary>
    </QueryClientProvider>
  );
  return strict ? <StrictMode>{tree}</StrictMode> : tree;
}

async function server(kind: TestServer['kind'], value: string) {
  const started = await serve(kind);
  started.store.upsert(text(URI, value));
  return started;
}

/** Well within requestTimeoutMs (30 s), which is all a read waiting for a mount used to get. */
const SOON = { timeout: 3000 };

describe.each(ERA_CASES)('a Suspense boundary above McpProvider ($kind)', ({ kind }) => {
  it.each([
    ['', false],
    [' in StrictMode', true],
  ])('the first read loads, stays live, and one connection is left%s', async (_, strict) => {
    const a = await server(kind, 'v1');
    const queryClient = newQueryClient();
    render(app(queryClient, a.url, strict));
    expect(screen.getByTestId('fallback')).toBeTruthy();
    await eventually(() => expect(screen.getByTestId('text').textContent).toBe('v1'), SOON);
    // The connection of the render React threw away ends; the committed provider's stays.
    await eventually(() => expect(a.openStreams()).toBe(1));
    if (kind !== 'modern') await eventually(() => expect(a.liveSessions()).toBe(1));
    await eventually(() => expect(a.subscribedUris()).toEqual([URI]));
    await idle(queryClient);
    act(() => a.setText(URI, 'v2'));
    await eventually(() => expect(screen.getByTestId('text').textContent).toBe('v2'));
  });

  it('a url that changes while mounted loads the new server’s data', async () => {
    const a = await server(kind, 'from A');
    const b = await server(kind, 'from B');
    const queryClient = newQueryClient();
    const view = render(app(queryClient, a.url));
    await eventually(() => expect(screen.getByTestId('text').textContent).toBe('from A'), SOON);
    view.rerender(app(queryClient, b.url));
    await eventually(() => expect(screen.getByTestId('text').textContent).toBe('from B'), SOON);
    // A's connection ends with the provider that made it; of B's, the committed one stays.
    await eventually(() => expect([a.openStreams(), b.openStreams()]).toEqual([0, 1]));
    if (kind !== 'modern') {
      await eventually(() => expect([a.liveSessions(), b.liveSessions()]).toEqual([0, 1]));
    }
  });

  it('a server that refuses ends in the error boundary, not in a fallback for good', async () => {
    const a = await server(kind, 'v1');
    const tamper = await startTamperProxy(a.url, { respond: () => ({ status: 404 }) });
    atEnd(() => tamper.close());
    render(app(newQueryClient(), tamper.url));
    await eventually(
      () => expect(screen.getByTestId('boundary').textContent).toContain('HTTP 404'),
      SOON,
    );
  });
});
