import { lazy, Suspense } from 'react';

export interface McpDevtoolsProps {
  /** Start with the panel open (default: a small button). */
  initialOpen?: boolean;
  /** Inspect the `<McpProvider scope>` of that name instead of the nearest one. */
  scope?: string;
  /** Render even when NODE_ENV is 'production' (off by default, like TanStack's devtools). */
  forceInProduction?: boolean;
}

// A separate chunk: apps that never render the devtools never load the panel.
const DevtoolsPanel = lazy(() => import('./DevtoolsPanel'));

// Written as `process.env.NODE_ENV` so the app's bundler replaces it and drops the panel.
declare const process: { env?: { NODE_ENV?: string } } | undefined;
const isProduction = () => typeof process !== 'undefined' && process.env?.NODE_ENV === 'production';

/** A floating panel with the connection, stream, subscriptions, diagnostics and event log. */
export function McpDevtools({ forceInProduction = false, ...props }: McpDevtoolsProps) {
  if (isProduction() && !forceInProduction) return null;
  return (
    <Suspense fallback={null}>
      <DevtoolsPanel {...props} />
    </Suspense>
  );
}
