/**
 * Rule 8 for options: a duration that no timer can take (not a number, negative, past what
 * `setTimeout` holds, where it fires at once) or that would make the connection hammer a server
 * (a reconnect cap of nothing: a server refusing at once would be asked again in a tight loop) is
 * a clear error naming the option. The connection ends in `error` at once, nothing is sent, the
 * tree below the provider does not crash.
 */
import { QueryClient } from '@tanstack/query-core';
import { describe, expect, it, vi } from 'vitest';
import { callTool } from '../../src/core';
import { keepAlive } from '../../src/core/keepAlive';
import { McpCacheSync, type McpCacheSyncOptions } from '../../src/core/mcpCacheSync';
import { shareAcrossTabs } from '../../src/tabs';
import { atEnd } from '../support/atEnd';
import { diagnosticsOf } from '../support/diagnostics';
import { serve, text } from '../support/eras';
import { BrowserLocks, openTab } from '../support/tabs';
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
    // It would read every quiet resource every half millisecond.
    ['a silence probe of 1 ms', { silenceProbeMs: 1 }, 'silenceProbeMs'],
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

  it.each([1, 50, Number.POSITIVE_INFINITY])(
    'a silence probe of %s ms starts no probe in the diagnostics either',
    async (silenceProbeMs) => {
      const started = vi.spyOn(globalThis, 'setInterval');
      atEnd(() => started.mockRestore());
      const { sync } = await connect({ silenceProbeMs });
      await eventually(() => expect(sync.getState().status).toBe('error'));
      diagnosticsOf(sync); // the diagnostics attach, with the probe if it may run
      const probes = started.mock.calls.filter(([, ms]) => ms === silenceProbeMs / 2);
      expect(probes).toEqual([]);
    },
  );

  it('a silence probe of 0 is off, as none is', async () => {
    const { sync } = await connect({ silenceProbeMs: 0 });
    await eventually(() => expect(sync.getState().status).toBe('ready'));
  });
});

describe('with shareAcrossTabs, a tab whose durations cannot work', () => {
  // Tabs of one server, scope and identity share a group whatever their options (another build of
  // the app, another page): a follower connects nothing of its own, so its options were never
  // checked. It showed the leader's `ready` and sent its reads and calls through it.
  // Opened first, it led: its connection ended in error, and so did every tab following it.
  it.each([
    ['opened after a tab that leads', false],
    ['opened first', true],
  ])('is in error, sends nothing, and the other tabs are served (%s)', async (_, first) => {
    const server = await serve('modern');
    server.store.upsert(text(URI, 'v1'));
    server.store.setTools([{ name: 'quick' }]);
    const locks = new BrowserLocks();
    const openInvalid = () => {
      const tab = openTab(locks, { url: server.url, toolTimeoutMs: 2 ** 31 });
      atEnd(tab.close);
      return tab;
    };
    const early = first ? openInvalid() : undefined;
    const valid = openTab(locks, { url: server.url });
    atEnd(valid.close);
    await eventually(() => expect(valid.sync.getState().status).toBe('ready'));
    const invalid = early ?? openInvalid();
    await eventually(() => expect(invalid.sync.getState().status).toBe('error'));
    expect(invalid.sync.getState().error).toMatchObject({ code: 'INVALID_OPTIONS' });
    expect(invalid.sync.getState().error?.message).toContain('toolTimeoutMs');
    await expect(callTool(invalid.sync, { name: 'quick' })).rejects.toMatchObject({
      code: 'INVALID_OPTIONS',
    });
    expect(server.counters().toolCalls).toBe(0);
    // The valid tab leads on, for itself.
    await expect(callTool(valid.sync, { name: 'quick' })).resolves.toMatchObject({
      content: [{ text: 'called quick with {}' }],
    });
    expect(valid.sync.getState().status).toBe('ready');
  });
});

describe('the option factories refuse a period no timer can take, when called', () => {
  it.each([
    ['NaN', Number.NaN],
    ['missing', undefined],
    ['0 (a ping every tick)', 0],
    ['past 2^31 - 1 ms', 2 ** 31],
  ])('keepAlive({ pingIntervalMs: %s })', (_, pingIntervalMs) => {
    expect(() => keepAlive({ pingIntervalMs } as { pingIntervalMs: number })).toThrow(
      expect.objectContaining({
        code: 'INVALID_OPTIONS',
        message: expect.stringContaining('pingIntervalMs'),
      }),
    );
  });

  it.each([
    ['NaN', Number.NaN],
    ['under 100 ms (a sweep every tick)', 10],
    ['a string', '2000'],
  ])('shareAcrossTabs({ livenessMs: %s })', (_, livenessMs) => {
    expect(() => shareAcrossTabs({ livenessMs: livenessMs as number })).toThrow(
      expect.objectContaining({
        code: 'INVALID_OPTIONS',
        message: expect.stringContaining('livenessMs'),
      }),
    );
  });

  it('ordinary values are taken', () => {
    expect(() => keepAlive({ pingIntervalMs: 15_000 })).not.toThrow();
    expect(() => shareAcrossTabs({ livenessMs: 100 })).not.toThrow();
    expect(() => shareAcrossTabs()).not.toThrow();
  });
});
