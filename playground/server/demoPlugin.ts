/**
 * Mounts the demo MCP server inside Vite's dev server: the app, `/mcp`, `/mcp-legacy` and the
 * control API share one origin and one port, so the browser needs no CORS and no second process.
 */
import type { Connect, Plugin } from 'vite';
import { ENDPOINTS } from '../shared/demo';
import { handleControl } from './controlApi';
import { DemoServer } from './demoServer';

export function mcpDemoServer(): Plugin {
  return {
    name: 'mcp-demo-server',
    // Only a dev server gets the demo; a test run importing this config must not start timers.
    apply: (_config, env) => env.command === 'serve' && !process.env.VITEST,
    configureServer(server) {
      const demo = new DemoServer();
      const middleware: Connect.NextHandleFunction = (req, res, next) => {
        // Matched by hand: `use('/mcp', …)` would strip the prefix from req.url.
        const path = (req.url ?? '/').split('?')[0] ?? '/';
        if (path === ENDPOINTS.modern.path) void demo.handle('modern', req, res);
        else if (path === ENDPOINTS.legacy.path) void demo.handle('legacy', req, res);
        else if (path.startsWith('/demo/')) void handleControl(demo, req, res);
        else next();
      };
      // Registered directly (not from a returned hook) so it runs before Vite's SPA fallback.
      server.middlewares.use(middleware);
      server.httpServer?.once('listening', () => {
        server.config.logger.info(
          `  MCP demo: ${ENDPOINTS.modern.path} (2026-07-28) and ${ENDPOINTS.legacy.path} (2025), control API under /demo/`,
        );
      });
      server.httpServer?.once('close', () => void demo.close());
    },
  };
}
