import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { render } from '@testing-library/react';
import type { ReactNode } from 'react';
import { McpProvider, type McpProviderProps } from '../../src';
import { atEnd } from './atEnd';
import { FAST } from './oauth';

/**
 * `children` under an McpProvider with `props` (quick reconnects, short linger) and a fresh
 * QueryClient cleared at the end of the test; `rerender` changes the provider's props.
 */
export function renderWithProvider(
  props: Partial<McpProviderProps> & { url: string },
  children: ReactNode,
) {
  const queryClient = new QueryClient({
    defaultOptions: { queries: { retry: 1, retryDelay: 20 } },
  });
  atEnd(() => queryClient.clear());
  const ui = (next: Partial<McpProviderProps>) => (
    <QueryClientProvider client={queryClient}>
      <McpProvider lingerMs={30} reconnect={FAST} {...props} {...next}>
        {children}
      </McpProvider>
    </QueryClientProvider>
  );
  const view = render(ui({}));
  return { queryClient, rerender: (next: Partial<McpProviderProps>) => view.rerender(ui(next)) };
}
