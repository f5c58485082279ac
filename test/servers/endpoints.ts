import { createLegacyEndpoint } from './legacyServer';
import { createLegacyV1Endpoint } from './legacyV1Server';
import { createModernEndpoint } from './modernServer';
import type { EndpointOptions, McpEndpoint, ServerKind } from './types';

export function createEndpoint(kind: ServerKind, options?: EndpointOptions): McpEndpoint {
  switch (kind) {
    case 'modern':
      return createModernEndpoint(options);
    case 'legacy-v2':
      return createLegacyEndpoint(options);
    case 'legacy-v1':
      return createLegacyV1Endpoint(options);
  }
}
