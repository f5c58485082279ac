import type { RedisEventBusConnection } from './client';
import { text } from './streamReply';

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
