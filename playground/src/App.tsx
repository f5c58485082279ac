import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { useState } from 'react';
import { ENDPOINTS, type EndpointId } from '../shared/demo';
import { Dashboard } from './components/Dashboard';
import { useEndpointParam } from './hooks/useEndpointParam';
import { McpProvider } from './mcp';
import { SCALE } from './scale';

// A bench wants outages to end quickly: cap the reconnect backoff at 2 s (default 15 s).
const RECONNECT = { initialDelayMs: 250, maxDelayMs: 2000 };
// Scaled mode only: re-read quiet acknowledged resources, so a change no instance announced to
// this page's stream shows up as a silent change in the diagnostics.
const PROBE = SCALE ? { silenceProbeMs: SCALE.silenceProbeMs } : {};

export function App() {
  const [endpoint, setEndpoint] = useEndpointParam();
  // Keyed on the endpoint: switching starts a fresh cache, event log and connection, so what
  // you see afterwards came from the other server.
  return <Session key={endpoint} endpoint={endpoint} onSwitch={setEndpoint} />;
}

function Session(props: { endpoint: EndpointId; onSwitch: (endpoint: EndpointId) => void }) {
  const [queryClient] = useState(() => new QueryClient());
  const url = new URL(ENDPOINTS[props.endpoint].path, window.location.origin).href;
  return (
    <QueryClientProvider client={queryClient}>
      <McpProvider url={url} reconnect={RECONNECT} {...PROBE}>
        <Dashboard endpoint={props.endpoint} onSwitch={props.onSwitch} />
      </McpProvider>
    </QueryClientProvider>
  );
}
