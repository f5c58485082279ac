import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { PersistQueryClientProvider } from '@tanstack/react-query-persist-client';
import type { ReactNode } from 'react';
import { useState } from 'react';
import { ENDPOINTS, type EndpointId, isEndpointId, SERVERS_CALLBACK_PATH } from '../shared/demo';
import { MCP_APPS_EXTENSION } from './apps';
import { Callback } from './components/Callback';
import { Dashboard } from './components/Dashboard';
import { ServersCallback } from './components/ServersCallback';
import { ServersPage } from './components/ServersPage';
import { SignInPage } from './components/SignInPage';
import { useEndpointParam } from './hooks/useEndpointParam';
import { usePersistParam, useShareParam } from './hooks/useSearchFlag';
import { createServerRequests, McpProvider } from './mcp';
import { KEEP_ALIVE, RECONNECT } from './options';
import { persistOptions } from './persist';
import { SCALE } from './scale';
import { shareAcrossTabs } from './tabs';

// Scaled mode only: re-read quiet acknowledged resources, so a change no instance announced to
// this page's stream shows up as a silent change in the diagnostics.
const PROBE = SCALE ? { silenceProbeMs: SCALE.silenceProbeMs } : {};

/**
 * Pages, picked by path: the dashboard (`/`), the sign-in demo (`/signin`), the servers a user
 * adds (`/servers`) and the pages the authorization server sends the browser back to
 * (`/callback/<endpoint>`, `/callback/servers`), which finish the sign-in and then show the page
 * the user left, without a reload.
 */
export function App() {
  const [path, setPath] = useState(() => window.location.pathname);
  const back = (to: string) => {
    window.history.replaceState(null, '', to);
    setPath(new URL(to, window.location.origin).pathname);
  };
  if (path === SERVERS_CALLBACK_PATH) return <ServersCallback onDone={back} />;
  if (path === '/servers') return <ServersPage />;
  const callback = /^\/callback\/([a-z]+)$/.exec(path)?.[1];
  if (isEndpointId(callback)) {
    return <Callback endpoint={callback} onDone={back} />;
  }
  if (path === '/signin') return <SignInPage />;
  return <DashboardApp />;
}

function DashboardApp() {
  const [endpoint, setEndpoint] = useEndpointParam();
  const [share, setShare] = useShareParam();
  const [persist, setPersist] = usePersistParam();
  // Keyed on the endpoint and the switches: switching starts a fresh cache, event log and
  // connection, so what you see afterwards came from the other server (or its own stream).
  return (
    <Session
      key={`${endpoint}:${share}:${persist}`}
      endpoint={endpoint}
      onSwitch={setEndpoint}
      share={share}
      onShare={setShare}
      persist={persist}
      onPersist={setPersist}
    />
  );
}

interface SessionProps {
  endpoint: EndpointId;
  onSwitch: (endpoint: EndpointId) => void;
  share: boolean;
  onShare: (share: boolean) => void;
  persist: boolean;
  onPersist: (persist: boolean) => void;
}

function Session(props: SessionProps) {
  const [queryClient] = useState(() => new QueryClient());
  // All tabs of this page on one server share one connection, held by the elected leader tab.
  const [tabs] = useState(() => (props.share ? shareAcrossTabs() : undefined));
  // Created once per connection: the Tools card answers the server's questions (elicitations).
  // It also declares MCP Apps: the Tools card renders views (`<McpApp>`).
  const [serverRequests] = useState(() =>
    createServerRequests({ elicitation: true, extensions: MCP_APPS_EXTENSION }),
  );
  const url = new URL(ENDPOINTS[props.endpoint].path, window.location.origin).href;
  return (
    <CacheProvider client={queryClient} url={url} persist={props.persist}>
      <McpProvider
        url={url}
        reconnect={RECONNECT}
        serverRequests={serverRequests}
        shareAcrossTabs={tabs}
        keepAlive={KEEP_ALIVE}
        {...PROBE}
      >
        <Dashboard {...props} />
      </McpProvider>
    </CacheProvider>
  );
}

/** The page's cache: kept in localStorage when the warm reload is on, else in memory only. */
function CacheProvider(props: {
  client: QueryClient;
  url: string;
  persist: boolean;
  children: ReactNode;
}) {
  const [options] = useState(() => persistOptions(props.url));
  if (!props.persist) {
    return <QueryClientProvider client={props.client}>{props.children}</QueryClientProvider>;
  }
  return (
    <PersistQueryClientProvider client={props.client} persistOptions={options}>
      {props.children}
    </PersistQueryClientProvider>
  );
}
