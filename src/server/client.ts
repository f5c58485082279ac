/**
 * The parts of a node-redis client (the `redis` package, v5/v6) the bus touches. Structural on
 * purpose: a client created with any modules, scripts or RESP version fits, and this entry
 * needs no runtime import of `redis` at all.
 */

/** A connection of the bus's own, made with `duplicate()`. */
export interface RedisEventBusConnection {
  readonly isReady: boolean;
  connect(): Promise<unknown>;
  /** `typeMapping`: how the reply's RESP types are handed over (node-redis 5+). */
  sendCommand(args: string[], options?: { typeMapping?: object }): Promise<unknown>;
  on(
    event: 'reconnecting' | 'connect' | 'ready' | 'error',
    listener: (value?: unknown) => void,
  ): unknown;
  destroy(): void;
}

export interface RedisEventBusClient {
  readonly isReady: boolean;
  readonly options?: { socket?: object } | undefined;
  sendCommand(args: string[]): Promise<unknown>;
  duplicate(overrides: { name: string; socket: object }): RedisEventBusConnection;
  on(event: 'ready', listener: () => void): unknown;
  off(event: 'ready', listener: () => void): unknown;
}
