import react from '@vitejs/plugin-react';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  plugins: [react()],
  build: {
    lib: { entry: 'src/index.ts', formats: ['es'], fileName: 'index' },
    sourcemap: true,
    minify: false,
    rolldownOptions: {
      external: [
        'react',
        'react/jsx-runtime',
        '@tanstack/react-query',
        '@tanstack/query-core',
        /^@modelcontextprotocol\//,
      ],
    },
  },
  test: {
    include: ['test/**/*.test.{ts,tsx}'],
    testTimeout: 20_000,
    hookTimeout: 20_000,
  },
});
