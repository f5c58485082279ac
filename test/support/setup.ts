/**
 * Vitest setup for every test file. Under jsdom, `eventually` (test/support/wait.ts) polls the way
 * testing-library's own waits do: outside React's act() environment, so what a server sends
 * renders as it would in an app, without act() warnings. (testing-library's own wrapper would do,
 * but it waits on the global setTimeout, which a test may have faked.)
 */
import { afterAll, vi } from 'vitest';
import { closeAll } from './atEnd';
import { wrapEventually } from './wait';

const realSetTimeout = globalThis.setTimeout;
const scope = globalThis as { IS_REACT_ACT_ENVIRONMENT?: boolean };

if (typeof document !== 'undefined') {
  wrapEventually(async (poll) => {
    const previous = scope.IS_REACT_ACT_ENVIRONMENT;
    scope.IS_REACT_ACT_ENVIRONMENT = false;
    try {
      const result = await poll();
      // Renders the last poll set off land before act() is expected again.
      await new Promise((resolve) => realSetTimeout(resolve, 0));
      return result;
    } finally {
      scope.IS_REACT_ACT_ENVIRONMENT = previous;
    }
  });
} else {
  wrapEventually((poll) => poll());
}

// A worker runs file after file in one module graph (`isolate: false`): what this module and its
// helpers keep is set for each file (the wrapper above), and a file leaves nothing behind for the
// next one, whether or not it awaited its own teardown: no McpCacheSync in `mountedSyncs()`, no
// cleanup in `atEnd`'s list, no fake timer, stubbed global or spy. (Runs after the file's own
// afterAll hooks.)
// The McpCacheSyncs are found where test/support/syncs.ts keeps them, on globalThis: importing
// that module here would load the library for every file, before its tests (~7 s of a run).
const MOUNTED = Symbol.for('mcp-react-query.test.mounted');
afterAll(async () => {
  vi.useRealTimers();
  const mounted = (globalThis as { [MOUNTED]?: Set<{ dispose(): Promise<void> }> })[MOUNTED];
  const left = [...(mounted ?? [])];
  mounted?.clear();
  await Promise.all(left.map((sync) => sync.dispose()));
  await closeAll();
  vi.unstubAllGlobals();
  vi.restoreAllMocks();
});
