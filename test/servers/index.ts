/**
 * Real MCP servers over Streamable HTTP for integration tests, the playground and benchmarks.
 * `startServer(kind)` listens on 127.0.0.1; the `create*Endpoint` functions give the bare
 * request handler for mounting elsewhere (e.g. as Vite dev-server middleware).
 */
import { startLegacyServer } from './legacyServer';
import { startLegacyV1Server } from './legacyV1Server';
import { startModernServer } from './modernServer';
import type { ServerKind, StartServerOptions, TestServer } from './types';

export {
  type AuthServer,
  type AuthServerOptions,
  type AuthServerStats,
  startAuthServer,
  type TokenClaims,
} from './authServer';
export { MCP_PATH, startHostedServer } from './httpHost';
export { createLegacyEndpoint, startLegacyServer } from './legacyServer';
export { createLegacyV1Endpoint, startLegacyV1Server } from './legacyV1Server';
export { createModernEndpoint, startModernServer } from './modernServer';
export type {
  Protection,
  ProtectionOptions,
  ProtectionStats,
} from './protectedResource';
export {
  type AskRecord,
  DEFAULT_READ_ERROR,
  type ElicitSchema,
  type ReadError,
  type ReadHook,
  type ReadOutcome,
  type ResourceAnnotations,
  ResourceStore,
  type StoredPrompt,
  type StoredResource,
  type StoredTemplate,
  type StoredTool,
} from './resourceStore';
export type {
  EndpointCounters,
  EndpointOptions,
  McpEndpoint,
  RequestRecord,
  RestartOptions,
  ServerCapabilityOptions,
  ServerKind,
  StartServerOptions,
  TestServer,
} from './types';

export const SERVER_KINDS: ServerKind[] = ['modern', 'legacy-v2', 'legacy-v1'];

export function startServer(kind: ServerKind, options?: StartServerOptions): Promise<TestServer> {
  switch (kind) {
    case 'modern':
      return startModernServer(options);
    case 'legacy-v2':
      return startLegacyServer(options);
    case 'legacy-v1':
      return startLegacyV1Server(options);
  }
}

/** The bare endpoint for a kind, for mounting on a server you own (Vite middleware, express). */
export { createEndpoint } from './endpoints';
export * from './tamperProxy';
