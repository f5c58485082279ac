/**
 * Vitest setup for every test file. Under jsdom, `eventually` (test/support/wait.ts) polls the way
 * testing-library's own waits do: outside React's act() environment, so what a server sends
 * renders as it would in an app, without act() warnings. (testing-library's own wrapper would do,
 * but it waits on the global setTimeout, which a test may have faked.)
 */
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
}
