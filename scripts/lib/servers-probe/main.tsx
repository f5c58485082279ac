/**
 * Not an example: what `npm run check:size` builds to measure `mcp-react-query/servers` apart
 * from the main entry — a chat host's use of it (the manager and its list, per-server sign-in,
 * every server's tools, a call by qualified name, every server's questions, a resource of one
 * server). Copied into the example app's directory (its node_modules) and built there.
 */
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { useResource } from 'mcp-react-query';
import {
  createServerSignIn,
  McpServersProvider,
  useCallServerTool,
  useMcpServers,
  useServerElicitations,
  useServerTools,
} from 'mcp-react-query/servers';
import { createRoot } from 'react-dom/client';

const signIn = createServerSignIn({ redirectUrl: new URL('/callback', window.location.href) });

function Doc({ scope }: { scope: string }) {
  const doc = useResource('config://app', { scope });
  return <pre>{JSON.stringify(doc.data)}</pre>;
}

function Host() {
  const { servers, add, remove } = useMcpServers();
  const { tools } = useServerTools();
  const call = useCallServerTool();
  const questions = useServerElicitations();
  return (
    <main>
      <button type="button" onClick={() => add({ name: 'Demo', url: 'http://127.0.0.1:5173/mcp' })}>
        add
      </button>
      {servers.map((server) => (
        <section key={server.id}>
          {server.name}: {server.status}
          <button type="button" onClick={server.authorize}>
            sign in
          </button>
          <button type="button" onClick={() => void remove(server.id)}>
            remove
          </button>
          {server.status === 'ready' && <Doc scope={server.id} />}
        </section>
      ))}
      {tools.map((tool) => (
        <button
          key={tool.qualifiedName}
          type="button"
          onClick={() => call.mutate({ name: tool.qualifiedName })}
        >
          {tool.qualifiedName}
        </button>
      ))}
      {questions.map((question) => (
        <button key={question.id} type="button" onClick={() => question.decline()}>
          {question.serverName}: {question.params.message}
        </button>
      ))}
    </main>
  );
}

const root = document.getElementById('root');
if (root) {
  createRoot(root).render(
    <QueryClientProvider client={new QueryClient()}>
      <McpServersProvider signIn={signIn} serverRequests={{ elicitation: true }}>
        <Host />
      </McpServersProvider>
    </QueryClientProvider>,
  );
}
