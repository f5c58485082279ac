/**
 * Vitest setup for every test file. Under jsdom, `eventually` (test/support/wait.ts) polls the way
 * testing-library's own waits do: outside React's act() environment, so what a server sends
 * renders as it would in an app, without act() warnings.
 */
import { wrapEventually } from './wait';

if (typeof document !== 'undefined') {
  const { configure, getConfig } = await import('@testing-library/react');
  // testing-library's `waitFor` / `findBy*` give up after 1 s by default: as long as `eventually`.
  configure({ asyncUtilTimeout: 5000 });
  wrapEventually((poll) => getConfig().asyncWrapper(poll));
}
