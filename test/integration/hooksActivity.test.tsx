/** @vitest-environment jsdom */
/**
 * `<McpProvider>` inside React's `<Activity>` (React 19.2+; a kept-alive route or tab): hidden,
 * its effects are cleaned up, so its connection ends (nothing stays open on the server); shown
 * again, its effects come back with the state it had, and it connects again rather than
 * throwing DISPOSED into the tree.
 */
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { act, cleanup, render, screen } from '@testing-library/react';
import { Activity, StrictMode } from 'react';
import { afterEach, describe, expect, it } from 'vitest';
import { McpProvider, useResource } from '../../src';
import { atEnd, closeAll } from '../support/atEnd';
import { ERA_CASES, serve, text } from '../support/eras';
import { disposeSyncs } from '../support/syncs';
import { eventually } from '../support/wait';

const URI = 'config://app';

afterEach(async () => {
  cleanup();
  await disposeSyncs();
  await closeAll();
});

function Viewer() {
  const query = useResource(URI);
  const content = query.data?.contents[0];
  return (
    <div data-testid="viewer">
      {query.error ? `error: ${query.error.message}` : ''}
      {content && 'text' in content ? content.text : ''}
    </div>
  );
}

describe.each(ERA_CASES)('McpProvider in an <Activity> ($kind)', ({ kind }) => {
  it.each([
    ['', false],
    [' in StrictMode', true],
  ])(
    'hidden, it closes its connection; shown again, it connects and stays live%s',
    async (_, strict) => {
      const server = await serve(kind);
      server.store.upsert(text(URI, 'v1'));
      const queryClient = new QueryClient({ defaultOptions: { queries: { retryDelay: 10 } } });
      atEnd(() => queryClient.clear());
      const ui = (mode: 'hidden' | 'visible') => {
        const tree = (
          <QueryClientProvider client={queryClient}>
            <Activity mode={mode}>
              <McpProvider url={server.url} lingerMs={20}>
                <Viewer />
              </McpProvider>
            </Activity>
          </QueryClientProvider>
        );
        return strict ? <StrictMode>{tree}</StrictMode> : tree;
      };
      const view = render(ui('visible'));
      await eventually(() => expect(screen.getByTestId('viewer').textContent).toBe('v1'));
      await eventually(() => expect(server.subscribedUris()).toEqual([URI]));

      view.rerender(ui('hidden'));
      await eventually(() => {
        expect(server.openStreams()).toBe(0);
        expect(server.liveSessions()).toBe(0);
      });

      view.rerender(ui('visible'));
      await eventually(() => expect(server.subscribedUris()).toEqual([URI]));
      expect(screen.getByTestId('viewer').textContent).toBe('v1');
      act(() => server.setText(URI, 'v2'));
      await eventually(() => expect(screen.getByTestId('viewer').textContent).toBe('v2'));
      expect(server.openStreams()).toBe(1);
    },
  );
});
