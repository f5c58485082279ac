/** @vitest-environment jsdom */
/**
 * Rule 7 under React StrictMode. StrictMode builds a provider's McpCacheSync twice (useMemo runs
 * twice) and keeps the first; the second one's constructor ran last. The mounted one must serve
 * its scope fully, its freshness included: a covered resource is fresh until notified, so a
 * component that shows it later reads nothing. (Found hosting MCP Apps: a view subscribing to a
 * resource the page already showed cost a read in the playground, which runs in StrictMode.)
 */
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { act, cleanup, render, screen } from '@testing-library/react';
import { StrictMode, useState } from 'react';
import { afterEach, describe, expect, it } from 'vitest';
import { McpProvider, useMcpDiagnostics, useResource } from '../../src';
import { ERA_CASES, start, text } from '../support/eras';
import { disposeSyncs } from '../support/syncs';
import { eventually, idle } from '../support/wait';

const URI = 'config://app';

const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  cleanup();
  await disposeSyncs();
  for (const close of cleanups.splice(0).reverse()) await close();
});

function Viewer({ label }: { label: string }) {
  const content = useResource(URI).data?.contents[0];
  return <div data-testid={label}>{content && 'text' in content ? content.text : ''}</div>;
}

function Acknowledged() {
  const resource = useMcpDiagnostics().resources.find((r) => r.uri === URI);
  return <div data-testid="ack">{String(resource?.acknowledged ?? false)}</div>;
}

function Page() {
  const [second, setSecond] = useState(false);
  return (
    <>
      <button type="button" onClick={() => setSecond(true)}>
        show again
      </button>
      <Viewer label="first" />
      <Acknowledged />
      {second && <Viewer label="second" />}
    </>
  );
}

describe.each(ERA_CASES)('StrictMode on the $kind server', ({ kind }) => {
  it('a covered resource stays fresh: a component that shows it later reads nothing', async () => {
    const server = await start(kind);
    cleanups.push(() => server.close());
    server.store.upsert(text(URI, 'v1'));
    const queryClient = new QueryClient();
    cleanups.push(() => queryClient.clear());
    render(
      <StrictMode>
        <QueryClientProvider client={queryClient}>
          <McpProvider url={server.url} lingerMs={30}>
            <Page />
          </McpProvider>
        </QueryClientProvider>
      </StrictMode>,
    );
    await eventually(() => expect(screen.getByTestId('first').textContent).toBe('v1'));
    await eventually(() => expect(screen.getByTestId('ack').textContent).toBe('true'));
    await idle(queryClient);
    expect(server.store.reads(URI)).toBe(1);

    act(() => screen.getByText('show again').click());
    await eventually(() => expect(screen.getByTestId('second').textContent).toBe('v1'));
    // A read would have started as the second component mounted.
    await idle(queryClient);
    expect(server.store.reads(URI)).toBe(1);
  });
});
