/**
 * Mounts the demo MCP server inside Vite's dev server: the app, `/mcp`, `/mcp-legacy` and the
 * control API share one origin and one port, so the playground page needs no CORS and no second
 * process. The two MCP endpoints also send CORS headers (cors.ts) for apps on other origins,
 * such as examples/vite-react.
 *
 * MCP Apps (appsHost.ts): the sandbox proxy on its own port and the official example app servers,
 * found by the page at `GET /demo/apps`.
 *
 * The sign-in demo (protectedDemo.ts): `/mcp-protected` and `/mcp-protected-legacy` want bearer
 * tokens from the demo authorization server, which this plugin starts on its own loopback port.
 *
 * The Servers page's second demo instance is at `/mcp-second` (2026-07-28 only).
 *
 * Scaled mode (`MCP_PLAYGROUND_INSTANCES`, set by `scripts/playground.mjs --instances N`): `/mcp`
 * becomes a round-robin proxy over N instances, and control-API changes are forwarded to one
 * instance each (see cluster.ts). `/mcp-legacy` stays a single instance.
 */
import type { Connect, Plugin, PreviewServer, ViteDevServer } from 'vite';
import { ENDPOINTS, PROTECTED_ENDPOINTS, SECOND_ENDPOINT } from '../shared/demo';
import { AppsHost } from './appsHost';
import { handleControl } from './controlApi';
import { applyCors } from './cors';
import { DemoServer } from './demoServer';
import { sendJson } from './http';
import { ProtectedDemo } from './protectedDemo';
import { scaleConfigFromEnv, scaleMode } from './scaleEnv';

const scale = scaleConfigFromEnv();
// Imported now, while Vite's config loader is still running (it is closed by the time
// configureServer runs); only in scaled mode, so the default playground never loads Redis.
const scaledModule = scale ? await import('./scaledDemo') : undefined;

export function mcpDemoServer(): Plugin {
  return {
    name: 'mcp-demo-server',
    // A dev or preview server gets the demo (a build only the scaled-mode constant); a test run
    // importing this config must not start timers.
    apply: () => !process.env.VITEST,
    config: () => ({
      // Vite's own CORS middleware runs before this plugin's and would answer the endpoints'
      // preflights with its generic policy (no exposed Mcp-Session-Id); cors.ts decides instead.
      server: { cors: false },
      preview: { cors: false },
      // What the page needs before it connects (see playground/src/scale.ts); nothing by default.
      ...(scale ? { define: { __PLAYGROUND_SCALE__: JSON.stringify(scaleMode(scale)) } } : {}),
    }),
    configureServer: (server) => mountDemo(server),
    // `npm run playground -- --production`: the built page, the same demo.
    configurePreviewServer: (server) => mountDemo(server),
  };
}

async function mountDemo(server: ViteDevServer | PreviewServer): Promise<void> {
  const logger = server.config.logger;
  let demo: DemoServer;
  let forwardControl: Connect.NextHandleFunction | undefined;
  if (scale && scaledModule) {
    const scaled = await scaledModule.startScaledDemo(scale, logger);
    demo = scaled.demo;
    forwardControl = (req, res) => scaled.cluster.forwardControl(req, res);
  } else {
    demo = new DemoServer();
  }
  const protectedDemo = await ProtectedDemo.start();
  // The Servers page's "second instance": its own store and clock, the same URIs and tools.
  const second = new DemoServer();
  const apps = new AppsHost();
  const middleware: Connect.NextHandleFunction = (req, res, next) => {
    // Matched by hand: `use('/mcp', …)` would strip the prefix from req.url.
    const path = (req.url ?? '/').split('?')[0] ?? '/';
    const endpoint =
      path === ENDPOINTS.modern.path
        ? 'modern'
        : path === ENDPOINTS.legacy.path
          ? 'legacy'
          : undefined;
    // Both eras, also in scaled mode (the proxy's answers pass through this response).
    if (endpoint) {
      if (!applyCors(req, res)) void demo.handle(endpoint, req, res);
    } else if (path === SECOND_ENDPOINT.path) {
      if (!applyCors(req, res)) void second.handle('modern', req, res);
    }
    // Scaled: reading the state is the dashboard's own view; a change goes to one instance.
    else if ((path === '/demo/apps' || path === '/demo/apps/examples') && req.method === 'GET') {
      (path === '/demo/apps' ? apps.info() : apps.examples()).then(
        (answer) => sendJson(res, 200, answer),
        (error: unknown) => sendJson(res, 500, { error: String(error) }),
      );
    } else if (path.startsWith('/demo/') && forwardControl && req.method !== 'GET') {
      forwardControl(req, res, next);
    } else if (path.startsWith('/demo/')) void handleControl(demo, req, res);
    else if (!protectedDemo.handle(path, req, res)) next();
  };
  // Registered directly (not from a returned hook) so it runs before Vite's SPA fallback.
  server.middlewares.use(middleware);
  server.httpServer?.once('listening', () => {
    logger.info(
      `  MCP demo: ${ENDPOINTS.modern.path} (2026-07-28) and ${ENDPOINTS.legacy.path} (2025), control API under /demo/`,
    );
    logger.info(
      `  Sign-in demo at /signin: ${PROTECTED_ENDPOINTS.modern.path} and ${PROTECTED_ENDPOINTS.legacy.path} want tokens from the demo authorization server on ${protectedDemo.authServer.url}`,
    );
    if (scale) {
      const bus =
        scale.bus === 'redis' && scale.redis
          ? `Redis event bus on ${scale.redis.url} (${scale.redis.origin}), stream "${scale.redis.channel}"`
          : 'in-memory bus per instance: changes reach only streams on the instance that made them (the failure mode, on purpose)';
      logger.info(
        `  Scaled: ${ENDPOINTS.modern.path} is a round-robin proxy over ${scale.instances} instances; ${bus}. ${ENDPOINTS.legacy.path} stays one instance.`,
      );
    }
  });
  server.httpServer?.once('close', () => {
    void demo.close();
    void second.close();
    void protectedDemo.close();
    void apps.close();
  });
}
