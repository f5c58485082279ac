import react from '@vitejs/plugin-react';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  plugins: [react()],
  build: {
    lib: {
      entry: { index: 'src/index.ts', server: 'src/server/index.ts' },
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
    },
  },
  test: {
    include: ['test/**/*.test.{ts,tsx}'],
    testTimeout: 20_000,
    hookTimeout: 20_000,
  },
});
