import type { RedisEventBusConnection } from './client';
import { compareIds, text } from './streamReply';

/**
 * Where Redis may not be asked the time (an ACL without TIME): how far ahead of this host's
 * clock a position may be before it counts as past the clock. Ids follow Redis' clock, which
 * may run ahead of ours.
 */
const AHEAD_MS = 60_000;

/** Redis' answer when this connection may not run a command (ACL) or it is renamed away. */
const REFUSED = /noperm|unknown command/i;

/** A reply, or undefined where Redis refuses the command itself; any other error is thrown. */
async function unlessRefused(
  connection: RedisEventBusConnection,
  args: string[],
): Promise<unknown> {
  try {
    return await connection.sendCommand(args);
  } catch (error) {
    if (!REFUSED.test(String(error))) throw error;
    return undefined;
  }
}

/** Redis' clock in ms (`TIME`); undefined where this connection may not ask it. */
export async function redisNow(connection: RedisEventBusConnection): Promise<number | undefined> {
  const reply = await unlessRefused(connection, ['TIME']);
  const [seconds, micros] = Array.isArray(reply) ? reply.map((part) => Number(text(part))) : [];
  if (seconds === undefined || micros === undefined || !Number.isFinite(seconds + micros)) {
    return undefined;
  }
  return seconds * 1000 + Math.floor(micros / 1000);
}

/** The stream's length (`XLEN`); undefined where this connection may not ask it. */
export async function streamLength(
  connection: RedisEventBusConnection,
  key: string,
): Promise<number | undefined> {
  const reply = await unlessRefused(connection, ['XLEN', key]);
  return reply === undefined ? undefined : Number(reply);
}

/**
 * Whether a position is at or past Redis' clock (a far-future id was read): a stream recreated
 * now gets ids below it. Redis' own TIME, so no clock skew between hosts hides a junk id a few
 * seconds ahead (whose recreated stream's entries would otherwise be skipped for good); where
 * TIME is refused, this host's clock plus `AHEAD_MS`.
 */
export class RedisClock {
  readonly #connection: RedisEventBusConnection;
  /** Redis answers TIME on this connection. */
  #asked = true;

  constructor(connection: RedisEventBusConnection) {
    this.#connection = connection;
  }

  async ahead(id: string): Promise<boolean> {
    let now = Date.now() + AHEAD_MS;
    if (this.#asked) {
      const time = await redisNow(this.#connection);
      if (time === undefined) this.#asked = false;
      else now = time;
    }
    return compareIds(id, `${now}-0`) >= 0;
  }
}
