import { availableParallelism } from 'node:os';
import react from '@vitejs/plugin-react';
import { defineConfig } from 'vitest/config';

// Entries a React Server Components bundler must treat as client modules (hooks, context,
// components). `core`, `server` and `apps/sandbox` stay without it so server code can import them.
const CLIENT_ENTRIES = new Set(['index', 'servers', 'apps', 'devtools', 'devtools.noop']);

export default defineConfig({
  plugins: [react()],
  build: {
    lib: {
      entry: {
        index: 'src/index.ts',
        core: 'src/core.ts',
        auth: 'src/auth.ts',
        tabs: 'src/tabs.ts',
        servers: 'src/servers.ts',
        apps: 'src/apps.ts',
        'apps/sandbox': 'src/apps/sandbox.ts',
        devtools: 'src/devtools.ts',
        'devtools.noop': 'src/devtools.noop.ts',
        server: 'src/server/index.ts',
      },
      formats: ['es'],
      fileName: (_format, name) => `${name}.js`,
    },
    sourcemap: true,
    minify: false,
    rolldownOptions: {
      external: [
        'react',
        'react/jsx-runtime',
        '@tanstack/react-query',
        '@tanstack/query-core',
        /^@modelcontextprotocol\//,
        'redis',
        /^@redis\//,
        /^node:/,
      ],
      output: {
        // One file per source module: a consumer's bundler then drops, module by module,
        // whatever the app does not use (sideEffects: false), diagnostics included.
        preserveModules: true,
        preserveModulesRoot: 'src',
        // A directive in the sources would be dropped by the bundler (it is module-level, and
        // modules get merged), so it is added to the built entry files instead. Checked after
        // every build by scripts/check-package.mjs.
        banner: (chunk) => (chunk.isEntry && CLIENT_ENTRIES.has(chunk.name) ? "'use client';" : ''),
      },
    },
  },
  test: {
    include: ['test/**/*.test.{ts,tsx}'],
    setupFiles: ['test/support/setup.ts'],
    // Most tests wait on servers and timers, not on the CPU: two workers even on two cores
    // (Vitest's default there is one), which halves the run and keeps every test honest about
    // load: none may depend on having the machine to itself.
    maxWorkers: Math.max(2, availableParallelism() - 1),
    // A worker keeps the modules it loaded (the SDK, React, TanStack, jsdom) from one file to the
    // next instead of loading them again for each: a third of the run on two cores. Every file
    // ends what it started (servers, syncs, fake timers, stubs) in its own afterEach, which is
    // what makes that safe; a file that leaks shows up as another file failing after it.
    isolate: false,
    testTimeout: 20_000,
    hookTimeout: 20_000,
  },
});
