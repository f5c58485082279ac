/**
 * Rule 8 for options: a duration that no timer can take (not a number, negative, past what
 * `setTimeout` holds, where it fires at once) or that would make the connection hammer a server
 * (a reconnect cap of nothing: a server refusing at once would be asked again in a tight loop) is
 * a clear error naming the option. The connection ends in `error` at once, nothing is sent, the
 * tree below the provider does not crash.
 */
import { QueryClient } from '@tanstack/query-core';
import { describe, expect, it } from 'vitest';
import { McpCacheSync, type McpCacheSyncOptions } from '../../src/core/mcpCacheSync';
import { atEnd } from '../support/atEnd';
import { serve, text } from '../support/eras';
import { eventually } from '../support/wait';

const URI = 'config://app';

async function connect(options: Partial<McpCacheSyncOptions>) {
  const server = await serve('modern');
  server.store.upsert(text(URI, 'v1'));
  const sent: string[] = [];
  const counting: typeof fetch = (input, init) => {
    sent.push(String(input instanceof Request ? input.url : input));
    return fetch(input, init);
  };
  const queryClient = new QueryClient({ defaultOptions: { queries: { retry: false } } });
  const sync = new McpCacheSync({ queryClient, url: server.url, fetch: counting, ...options });
  atEnd(async () => {
    await sync.dispose();
    queryClient.clear();
  });
  sync.mount();
  return { sync, sent };
}

describe('a duration option no timer can take is a clear error, and nothing is sent', () => {
  it.each<[string, Partial<McpCacheSyncOptions>, string]>([
    ['NaN', { requestTimeoutMs: Number.NaN }, 'requestTimeoutMs'],
    ['negative', { lingerMs: -1 }, 'lingerMs'],
    ['a string', { ackTimeoutMs: '500' as unknown as number }, 'ackTimeoutMs'],
    ['Infinity (a timer fires at once)', { lingerMs: Number.POSITIVE_INFINITY }, 'lingerMs'],
    ['past 2^31 - 1 ms', { toolTimeoutMs: 2 ** 31 }, 'toolTimeoutMs'],
    ['a timeout of nothing', { requestTimeoutMs: 0 }, 'requestTimeoutMs'],
    ['a silence probe of nothing', { silenceProbeMs: -5 }, 'silenceProbeMs'],
    [
      'a reconnect cap of nothing',
      { reconnect: { initialDelayMs: 0, maxDelayMs: 0 } },
      'maxDelayMs',
    ],
    ['a reconnect delay below zero', { reconnect: { initialDelayMs: -10 } }, 'initialDelayMs'],
  ])('%s', async (_, options, named) => {
    const { sync, sent } = await connect(options);
    await eventually(() => expect(sync.getState().status).toBe('error'));
    const { error } = sync.getState();
    expect(error).toMatchObject({ code: 'INVALID_OPTIONS' });
    expect(error?.message).toContain(named);
    expect(sent).toEqual([]);
  });

  it('defaults and ordinary values connect and read', async () => {
    const { sync } = await connect({
      lingerMs: 0,
      requestTimeoutMs: 5000,
      reconnect: { initialDelayMs: 20, maxDelayMs: 100 },
      silenceProbeMs: 200,
    });
    await eventually(() => expect(sync.getState().status).toBe('ready'));
  });
});
