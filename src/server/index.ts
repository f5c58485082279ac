/**
 * `mcp-react-query/server`: Node-only helpers for the MCP servers the hooks talk to. A separate
 * entry so browser bundles never see it; nothing here imports React.
 */
export type { RedisEventBusClient, RedisEventBusConnection } from './client';
export { RedisEventBusError, type RedisEventBusErrorCode } from './errors';
export {
  createRedisEventBus,
  type RedisEventBus,
  type RedisEventBusOptions,
  type RedisEventBusStats,
} from './redisEventBus';
