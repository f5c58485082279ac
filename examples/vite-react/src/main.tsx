import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { McpProvider } from 'mcp-react-query';
import { McpDevtools } from 'mcp-react-query/devtools';
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { App } from './App';

// `?server=` picks the MCP endpoint, e.g. the playground's 2025 one: ?server=http://127.0.0.1:5173/mcp-legacy
const DEFAULT_SERVER = 'http://127.0.0.1:5173/mcp';
const server = new URLSearchParams(window.location.search).get('server') ?? DEFAULT_SERVER;

const queryClient = new QueryClient();

const root = document.getElementById('root');
if (!root) throw new Error('index.html has no #root');

createRoot(root).render(
  <StrictMode>
    <QueryClientProvider client={queryClient}>
      <McpProvider url={server}>
        <App server={server} />
        {/* The panel in `vite` (dev); a no-op component in a production build. */}
        <McpDevtools />
      </McpProvider>
    </QueryClientProvider>
  </StrictMode>,
);
