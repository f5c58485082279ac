/** @vitest-environment jsdom */
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { cleanup, render, screen } from '@testing-library/react';
import { afterEach, describe, expect, it } from 'vitest';
import { McpProvider, mcpKeys, useResource } from '../../src';
import type { TestServer } from '../servers';
import { ERA_CASES, start, text } from '../support/eras';
import { disposeSyncs } from '../support/syncs';
import { eventually } from '../support/wait';

const seen: string[] = [];

function Viewer({ uri }: { uri: string }) {
  const query = useResource(uri);
  const content = query.data?.contents[0];
  const shown = content && 'text' in content ? content.text : '…';
  seen.push(`${uri}=${shown}`);
  return <div data-testid={uri}>{shown}</div>;
}

function App({ client, url, who }: { client: QueryClient; url: string; who: string }) {
  return (
    <QueryClientProvider client={client}>
      <McpProvider url={url} authContext={who} lingerMs={20}>
        <Viewer uri="secret://inbox" />
        <Viewer uri="public://news" />
      </McpProvider>
    </QueryClientProvider>
  );
}

describe.each(ERA_CASES)('private data across authorisation contexts ($kind)', ({ kind, era }) => {
  let server: TestServer;
  afterEach(async () => {
    cleanup();
    await disposeSyncs();
    await server.close();
  });

  it('nothing read under the previous context is rendered after authContext changes', async () => {
    server = await start(kind);
    server.store.upsert(text('secret://inbox', "alice's inbox", { cacheScope: 'private' }));
    server.store.upsert(text('public://news', 'news', { cacheScope: 'public' }));
    const client = new QueryClient();
    const view = render(<App client={client} url={server.url} who="alice" />);
    await eventually(() =>
      expect(screen.getByTestId('secret://inbox').textContent).toBe("alice's inbox"),
    );
    await eventually(() => expect(screen.getByTestId('public://news').textContent).toBe('news'));

    server.store.setText('secret://inbox', "bob's inbox");
    seen.length = 0;
    view.rerender(<App client={client} url={server.url} who="bob" />);
    await eventually(() =>
      expect(screen.getByTestId('secret://inbox').textContent).toBe("bob's inbox"),
    );
    expect(seen).not.toContain("secret://inbox=alice's inbox");
    if (era === 'modern') {
      // Public data may be reused across contexts: it never left the screen.
      expect(seen).not.toContain('public://news=…');
    }
    expect(client.getQueryData(mcpKeys.resource('secret://inbox'))).toMatchObject({
      contents: [{ text: "bob's inbox" }],
    });
    client.clear();
  });
});
