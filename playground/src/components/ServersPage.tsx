import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { useState } from 'react';
import { RECONNECT } from '../options';
import { SERVERS_STORAGE_KEY, serverSignIn } from '../serverList';
import { McpServersProvider } from '../servers';
import { AllToolsCard } from './AllToolsCard';
import { ServersCard } from './ServersCard';
import { TopBar } from './TopBar';

/**
 * `/servers`: the servers a user adds at run time (`mcp-react-query/servers`), each its own
 * connection and scope, kept in localStorage and shared with the other tabs; sign-in per
 * server; every server's tools under qualified names.
 */
export function ServersPage() {
  const [queryClient] = useState(() => new QueryClient());
  return (
    <QueryClientProvider client={queryClient}>
      <McpServersProvider
        storageKey={SERVERS_STORAGE_KEY}
        signIn={serverSignIn}
        serverRequests={{ elicitation: true }}
        reconnect={RECONNECT}
        requestTimeoutMs={5000}
      >
        <div className="page">
          <TopBar page="servers">
            <span className="muted small">
              <code>mcp-react-query/servers</code>: one connection per server, added at run time
            </span>
          </TopBar>
          <main className="grid">
            <ServersCard />
            <AllToolsCard />
          </main>
        </div>
      </McpServersProvider>
    </QueryClientProvider>
  );
}
