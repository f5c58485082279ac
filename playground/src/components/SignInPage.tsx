import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { useState } from 'react';
import { ENDPOINT_IDS, PROTECTED_ENDPOINTS, type SignInMode } from '../../shared/demo';
import { McpProvider } from '../mcp';
import { RECONNECT } from '../options';
import { providerFor, signInHref, signInParams } from '../signin';
import { SignInCard } from './SignInCard';
import { StatusBadge } from './StatusBadge';
import { TopBar } from './TopBar';

const MODES: SignInMode[] = ['redirect', 'popup'];

/**
 * `/signin?endpoint=modern|legacy&mode=redirect|popup`: the demo MCP server behind bearer
 * tokens. The provider is the page's (one per endpoint and mode, see signin.ts); switching is a
 * link, so each choice starts with its own page, cache and connection.
 */
export function SignInPage() {
  const [{ endpoint, mode }] = useState(() => signInParams(window.location.search));
  const [queryClient] = useState(() => new QueryClient());
  const provider = providerFor(endpoint, mode);
  const url = new URL(PROTECTED_ENDPOINTS[endpoint].path, window.location.origin).href;
  return (
    <QueryClientProvider client={queryClient}>
      <McpProvider url={url} authProvider={provider} reconnect={RECONNECT}>
        <div className="page">
          <TopBar page="signin">
            <nav className="switch" aria-label="Protected endpoint">
              {ENDPOINT_IDS.map((id) => (
                <a
                  key={id}
                  href={signInHref(id, mode)}
                  data-testid={`protected-${id}`}
                  aria-current={id === endpoint ? 'true' : undefined}
                >
                  <strong>{PROTECTED_ENDPOINTS[id].label}</strong>
                  <code>{PROTECTED_ENDPOINTS[id].path}</code>
                </a>
              ))}
            </nav>
            <nav className="switch" aria-label="Sign-in mode">
              {MODES.map((m) => (
                <a
                  key={m}
                  href={signInHref(endpoint, m)}
                  data-testid={`mode-${m}`}
                  aria-current={m === mode ? 'true' : undefined}
                >
                  <strong>{m}</strong>
                  <code>{m === 'redirect' ? 'leaves the page' : 'opens a window'}</code>
                </a>
              ))}
            </nav>
            <StatusBadge />
          </TopBar>
          <main className="grid">
            <SignInCard provider={provider} endpoint={endpoint} mode={mode} />
          </main>
        </div>
      </McpProvider>
    </QueryClientProvider>
  );
}
