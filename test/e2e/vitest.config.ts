import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

// Kept apart from the unit run: these start a dev server and a real Chromium.
export default defineConfig({
  root: fileURLToPath(new URL('../..', import.meta.url)),
  test: {
    include: ['test/e2e/**/*.e2e.ts'],
    environment: 'node',
    // One dev server and one browser for the whole run.
    fileParallelism: false,
    testTimeout: 45_000,
    hookTimeout: 60_000,
  },
});
