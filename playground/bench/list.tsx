/**
 * The browser bench's page (bench/scenarios/browser.bench.ts): a list of resources in Chromium,
 * against the playground's own server, same origin, HTTP/1.1. `?impl=ours|plain|floor&era=modern|legacy`
 * (`floor`, 2025 servers: plain with each read after its own `resources/subscribe`).
 * The bench calls `window.__bench.run(uris)` once the connection is up: the rows mount at once
 * and it resolves with the time until every row shows its content.
 */
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { QueryClient, QueryClientProvider, useQuery } from '@tanstack/react-query';
import { createContext, type ReactNode, useContext, useLayoutEffect, useState } from 'react';
import { flushSync } from 'react-dom';
import { createRoot } from 'react-dom/client';
import { ENDPOINTS, isEndpointId } from '../shared/demo';
import { McpProvider, useMcp, useResource } from '../src/mcp';

interface Bench {
  ready: boolean;
  run(uris: string[]): Promise<{ ms: number; rows: number }>;
}

declare global {
  interface Window {
    __bench?: Bench;
  }
}

const params = new URLSearchParams(location.search);
const impl = ({ plain: 'plain', floor: 'floor' } as const)[params.get('impl') ?? ''] ?? 'ours';
const era = params.get('era');
const endpoint = ENDPOINTS[isEndpointId(era) ? era : 'modern'].path;

/** What each row waits for: the bench's callback per URI, told every text the row shows. */
const watchers = new Map<string, (text: string | undefined) => void>();

const textOf = (data: { contents: unknown[] } | undefined) => {
  const content = data?.contents[0] as { text?: string } | undefined;
  return content?.text;
};

function useReport(uri: string, text: string | undefined): ReactNode {
  useLayoutEffect(() => watchers.get(uri)?.(text), [uri, text]);
  return <li>{text ?? '…'}</li>;
}

function OursRow({ uri }: { uri: string }) {
  return useReport(uri, textOf(useResource(uri).data));
}

const PlainClient = createContext<Client | undefined>(undefined);

function PlainRow({ uri }: { uri: string }) {
  const client = useContext(PlainClient) as Client;
  const query = useQuery({
    queryKey: ['plain', uri],
    queryFn:
      impl === 'floor'
        ? async () => {
            await client.subscribeResource({ uri });
            return client.readResource({ uri }, { cacheMode: 'bypass' });
          }
        : () => client.readResource({ uri }, { cacheMode: 'bypass' }),
  });
  return useReport(uri, textOf(query.data));
}

/** Ours is up once useMcp() says so. */
function OursReady({ onReady }: { onReady: () => void }) {
  const { status } = useMcp();
  useLayoutEffect(() => {
    if (status === 'ready') onReady();
  }, [status, onReady]);
  return null;
}

function List(props: { expose: (set: (uris: string[]) => void) => void; onReady: () => void }) {
  const [uris, setUris] = useState<string[]>([]);
  props.expose(setUris);
  return (
    <>
      {impl === 'ours' && <OursReady onReady={props.onReady} />}
      <ul>
        {uris.map((uri) =>
          impl === 'ours' ? <OursRow key={uri} uri={uri} /> : <PlainRow key={uri} uri={uri} />,
        )}
      </ul>
    </>
  );
}

async function main() {
  const queryClient = new QueryClient();
  const root = createRoot(document.getElementById('root') as HTMLElement);
  let setUris: (rows: string[]) => void = () => {};
  let ready!: () => void;
  const connected = new Promise<void>((resolve) => {
    ready = resolve;
  });
  const list = <List expose={(set) => (setUris = set)} onReady={() => ready()} />;
  if (impl !== 'ours') {
    const client = new Client(
      { name: 'bench-plain', version: '0.0.0' },
      { versionNegotiation: { mode: 'auto' } },
    );
    await client.connect(new StreamableHTTPClientTransport(new URL(endpoint, location.href)));
    flushSync(() =>
      root.render(
        <QueryClientProvider client={queryClient}>
          <PlainClient.Provider value={client}>{list}</PlainClient.Provider>
        </QueryClientProvider>,
      ),
    );
    ready();
  } else {
    flushSync(() =>
      root.render(
        <QueryClientProvider client={queryClient}>
          <McpProvider url={new URL(endpoint, location.href).href}>{list}</McpProvider>
        </QueryClientProvider>,
      ),
    );
  }
  await connected;
  const bench: Bench = {
    ready: true,
    async run(uris) {
      const pending = new Set(uris);
      let last = 0;
      const done = new Promise<void>((resolve) => {
        for (const uri of uris) {
          watchers.set(uri, (text) => {
            if (text === undefined || !pending.delete(uri)) return;
            last = performance.now();
            if (pending.size === 0) resolve();
          });
        }
      });
      const start = performance.now();
      flushSync(() => setUris(uris));
      await done;
      return { ms: last - start, rows: uris.length };
    },
  };
  window.__bench = bench;
}

void main();
