import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

// Nothing package-specific: the export conditions pick the devtools panel in `vite` (dev) and a
// no-op in `vite build`.
export default defineConfig({
  plugins: [react()],
});
