import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

// Apart from the unit run: it needs the built package (dist/) and Node 20.3.0 from the npm
// registry (scripts/node-floor.mjs installs it).
export default defineConfig({
  root: fileURLToPath(new URL('../..', import.meta.url)),
  test: {
    include: ['test/node-floor/**/*.node.ts'],
    environment: 'node',
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});
