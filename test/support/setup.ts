/**
 * Vitest setup for every test file. testing-library's `waitFor` / `findBy*` give up after 1 s by
 * default: on a loaded 2-core machine a round trip to a real server can take longer, and a full
 * run beside a Chromium e2e failed eight React tests that way. They wait as long as
 * `eventually` does (test/support/wait.ts); a passing test is not slower for it.
 */
if (typeof document !== 'undefined') {
  const { configure } = await import('@testing-library/react');
  configure({ asyncUtilTimeout: 5000 });
}

export {};
