import { lazy, Suspense } from 'react';

export interface McpDevtoolsProps {
  /** Start with the panel open (default: a small button). */
  initialOpen?: boolean;
  /** Inspect the `<McpProvider scope>` of that name instead of the nearest one. */
  scope?: string;
}

// A separate chunk: a page that never renders the panel never loads it.
const DevtoolsPanel = lazy(() => import('./DevtoolsPanel'));

/**
 * A floating panel with the connection, stream, subscriptions, diagnostics and event log.
 *
 * This is the real panel. Apps get it from `mcp-react-query/devtools`, whose export map picks
 * this file only under the `development` condition and a no-op otherwise (`devtools.noop.ts`),
 * so a production bundle never contains it. No runtime NODE_ENV check here: `process` does not
 * exist in a browser, so such a check cannot tell production from development there.
 */
export function McpDevtools(props: McpDevtoolsProps) {
  return (
    <Suspense fallback={null}>
      <DevtoolsPanel {...props} />
    </Suspense>
  );
}
