import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

// Run by scripts/check-example.mjs once the example app is built (MCP_EXAMPLE_DIST).
export default defineConfig({
  root: fileURLToPath(new URL('../..', import.meta.url)),
  test: {
    include: ['test/example/**/*.e2e.ts'],
    environment: 'node',
    fileParallelism: false,
    testTimeout: 45_000,
    hookTimeout: 60_000,
  },
});
