/**
 * Scaled mode's settings, as `scripts/playground.mjs` hands them to the dev server: environment
 * variables, so `vite` itself stays the process that serves. None set: the default playground
 * (one process, one modern endpoint), untouched.
 */
import type { BusKind, ScaleMode } from '../shared/demo';
import type { ScaleConfig } from './cluster';

export const ENV = {
  instances: 'MCP_PLAYGROUND_INSTANCES',
  bus: 'MCP_PLAYGROUND_BUS',
  redisUrl: 'MCP_PLAYGROUND_REDIS_URL',
  redisChannel: 'MCP_PLAYGROUND_REDIS_CHANNEL',
  redisOrigin: 'MCP_PLAYGROUND_REDIS_ORIGIN',
} as const;

/** The page's `silenceProbeMs` in scaled mode (off in the default mode, as in an app). */
export const SILENCE_PROBE_MS = 5000;
const MAX_INSTANCES = 16;

function isBus(value: string): value is BusKind {
  return value === 'redis' || value === 'memory';
}

/** `undefined`: the default mode. Throws on settings that make no sense, before anything starts. */
export function scaleConfigFromEnv(env: NodeJS.ProcessEnv = process.env): ScaleConfig | undefined {
  const rawInstances = env[ENV.instances]?.trim();
  if (!rawInstances) return undefined;
  const instances = Number(rawInstances);
  if (!Number.isInteger(instances) || instances < 1 || instances > MAX_INSTANCES) {
    throw new Error(
      `${ENV.instances} must be an integer from 1 to ${MAX_INSTANCES}, not "${rawInstances}"`,
    );
  }
  const bus = env[ENV.bus]?.trim() || 'redis';
  if (!isBus(bus)) throw new Error(`${ENV.bus} must be "redis" or "memory", not "${bus}"`);
  if (bus === 'memory') return { instances, bus };
  const url = env[ENV.redisUrl]?.trim();
  if (!url) {
    throw new Error(
      `${ENV.bus}=redis needs ${ENV.redisUrl} (start the playground with scripts/playground.mjs, which provides one)`,
    );
  }
  const channel =
    env[ENV.redisChannel]?.trim() || `mcp-playground:${process.pid}:${Date.now().toString(36)}`;
  const origin = env[ENV.redisOrigin]?.trim() || 'given';
  return { instances, bus, redis: { url, channel, origin } };
}

export function scaleMode(config: ScaleConfig | undefined): ScaleMode | null {
  return config
    ? { instances: config.instances, bus: config.bus, silenceProbeMs: SILENCE_PROBE_MS }
    : null;
}
