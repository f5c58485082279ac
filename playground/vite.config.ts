import { fileURLToPath } from 'node:url';
import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';
import { mcpDemoServer } from './server/demoPlugin';

export default defineConfig(({ mode }) => ({
  root: fileURLToPath(new URL('.', import.meta.url)),
  plugins: [react(), mcpDemoServer()],
  // `--mode frozen` (the browser tests): no HMR and no file watching, so edits elsewhere in the
  // repository cannot reload or hot-swap the library under a running test.
  server: mode === 'frozen' ? { hmr: false, watch: null } : {},
  // `--production` builds both pages: the playground and the browser bench's.
  build: {
    rolldownOptions: {
      input: {
        main: fileURLToPath(new URL('index.html', import.meta.url)),
        bench: fileURLToPath(new URL('bench.html', import.meta.url)),
      },
    },
  },
}));
