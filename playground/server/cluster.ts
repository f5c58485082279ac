/**
 * Scaled mode's 2026-07-28 side: N instances (each its own `createMcpHandler`, its own bus, its
 * own loopback port) behind a round-robin proxy that the dev server runs on `/mcp`.
 *
 * Three independent rotations, as a load balancer with route-based pools would have them:
 * - MCP requests (`/mcp`): a listen stream and the reads land on whichever instance is next;
 * - control-API changes (`/demo/*` POST/DELETE): consecutive changes always land on different
 *   instances, so a demo (or a test) never depends on luck to cross instances;
 * - the clock, a scheduled job: each tick runs on the next instance.
 *
 * Nothing here publishes a change on more than one instance: reaching the others is the bus's
 * job. With `bus: 'redis'` each instance has its own node-redis client and its own
 * `createRedisEventBus`; with `bus: 'memory'` each has its own `InMemoryServerEventBus`, which
 * is the failure this mode exists to show.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { InMemoryServerEventBus } from '@modelcontextprotocol/server';
import { createClient } from 'redis';
import { createRedisEventBus } from '../../src/server/index';
import { Forwarder, RoundRobin } from '../../test/servers/forwarder';
import type { ResourceStore } from '../../test/servers/index';
import { sortedUnique } from '../../test/servers/protocol';
import type { BusKind, EndpointView, HandledChange, InstanceView, ScaleView } from '../shared/demo';
import type { ModernSide, Publisher } from './demoServer';
import { type BusHandle, type ControlRoute, DemoInstance } from './instance';

const CONNECT_TIMEOUT_MS = 5000;
const RECENT_CHANGES = 8;

export interface ScaleConfig {
  instances: number;
  bus: BusKind;
  /** Redis only. */
  redis?: { url: string; channel: string; origin: string };
}

export interface Logger {
  info(message: string): void;
  warn(message: string): void;
}

function withTimeout<T>(promise: Promise<T>, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`${what}: no answer in ${CONNECT_TIMEOUT_MS} ms`)),
      CONNECT_TIMEOUT_MS,
    );
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/** What the cluster needs of each instance's node-redis client, after its bus is set up. */
interface RedisClient {
  destroy(): void;
}

async function redisBus(
  redis: NonNullable<ScaleConfig['redis']>,
  name: string,
  logger: Logger,
  clients: RedisClient[],
): Promise<BusHandle> {
  // One client per instance, as if each were its own process.
  const client = createClient({
    url: redis.url,
    socket: { reconnectStrategy: (retries) => Math.min(100 * 2 ** retries, 2000) },
  });
  let down = false;
  client.on('error', (error: Error) => {
    if (down) return;
    down = true;
    logger.warn(`  [${name}] Redis client: ${error.message} (reconnecting)`);
  });
  client.on('ready', () => {
    down = false;
  });
  clients.push(client);
  await withTimeout(client.connect(), `connecting ${name} to ${redis.url}`);
  const bus = createRedisEventBus({
    redis: client,
    channel: redis.channel,
    onerror: (error) => logger.warn(`  [${name}] event bus (${error.code}): ${error.message}`),
  });
  await withTimeout(bus.ready(), `${name}'s event bus`);
  return {
    bus,
    fromOthers: () => bus.stats().received,
    connected: () => bus.stats().connected,
    attach: (handler) => bus.attach(handler),
    close: () => bus.close(),
  };
}

function memoryBus(name: string, logger: Logger): BusHandle {
  return {
    bus: new InMemoryServerEventBus((error) =>
      logger.warn(`  [${name}] listener: ${error.message}`),
    ),
    // No path between instances: that is the point.
    fromOthers: () => 0,
    connected: () => null,
    attach: (handler) => handler,
    close: async () => {},
  };
}

export class ScaledCluster implements ModernSide {
  readonly instances: DemoInstance[];
  readonly #config: ScaleConfig;
  readonly #clients: RedisClient[];
  readonly #forwarder = new Forwarder();
  readonly #mcp: RoundRobin;
  readonly #control: RoundRobin;
  readonly #jobs: RoundRobin;
  readonly #recent: HandledChange[] = [];
  #seq = 0;
  #closing: Promise<void> | undefined;

  private constructor(config: ScaleConfig, instances: DemoInstance[], clients: RedisClient[]) {
    this.#config = config;
    this.instances = instances;
    this.#clients = clients;
    this.#mcp = new RoundRobin(instances.length);
    this.#control = new RoundRobin(instances.length);
    this.#jobs = new RoundRobin(instances.length);
  }

  static async start(options: {
    store: ResourceStore;
    config: ScaleConfig;
    control: ControlRoute;
    logger: Logger;
  }): Promise<ScaledCluster> {
    const { config, logger } = options;
    const clients: RedisClient[] = [];
    const instances: DemoInstance[] = [];
    try {
      for (let i = 0; i < config.instances; i += 1) {
        const name = `instance-${i}`;
        const bus =
          config.bus === 'redis' && config.redis
            ? await redisBus(config.redis, name, logger, clients)
            : memoryBus(name, logger);
        instances.push(
          await DemoInstance.start({ name, store: options.store, bus, control: options.control }),
        );
      }
    } catch (error) {
      await Promise.allSettled(instances.map((instance) => instance.close()));
      for (const client of clients) client.destroy();
      throw error;
    }
    return new ScaledCluster(config, instances, clients);
  }

  /** `/mcp`: the next instance in the MCP rotation. */
  handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    this.#forwarder.forward(req, res, this.#next(this.#mcp).origin);
    return Promise.resolve();
  }

  /** A control-API change: the next instance in the control rotation handles it. */
  forwardControl(req: IncomingMessage, res: ServerResponse): void {
    this.#forwarder.forward(req, res, this.#next(this.#control).origin);
  }

  /** Called by the instance that handled a change. */
  changeHandled(instance: DemoInstance, what: string): void {
    instance.changeHandled();
    this.#seq += 1;
    this.#recent.unshift({ seq: this.#seq, instance: instance.name, what, at: Date.now() });
    this.#recent.length = Math.min(this.#recent.length, RECENT_CHANGES);
  }

  // A change made outside any request still goes out through one instance, never all of them.
  resourceUpdated(uri: string): void {
    this.scheduled().resourceUpdated(uri);
  }

  resourcesChanged(): void {
    this.scheduled().resourcesChanged();
  }

  scheduled(): Publisher {
    return this.#next(this.#jobs).publisher;
  }

  view(): EndpointView {
    const views = this.instances.map((instance) => instance.view());
    return {
      subscribedUris: sortedUnique(views.flatMap((view) => view.subscribedUris)),
      openStreams: views.reduce((sum, view) => sum + view.listenStreams, 0),
      sessions: 0,
      reads: views.reduce((sum, view) => sum + view.reads, 0),
    };
  }

  scaleView(): ScaleView {
    const instances: InstanceView[] = this.instances.map((instance) => instance.view());
    const view: ScaleView = {
      bus: this.#config.bus,
      instances,
      recentChanges: this.#recent.map((change) => ({ ...change })),
    };
    if (this.#config.bus === 'redis' && this.#config.redis) view.redis = { ...this.#config.redis };
    return view;
  }

  dropStreams(): void {
    for (const instance of this.instances) instance.dropStreams();
  }

  close(): Promise<void> {
    this.#closing ??= this.#close();
    return this.#closing;
  }

  async #close(): Promise<void> {
    await Promise.allSettled(this.instances.map((instance) => instance.close()));
    this.#forwarder.close();
    // The stream key stays: a dev-server restart (an edited plugin file) starts a new cluster on
    // the same key while this one closes. scripts/playground.mjs removes it on exit.
    for (const client of this.#clients) client.destroy();
  }

  #next(rotation: RoundRobin): DemoInstance {
    return this.instances[rotation.take()] as DemoInstance;
  }
}
