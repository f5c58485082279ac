/**
 * What stands for a scope of no server (src/servers/standIns.ts): one per scope while kept, the
 * newest 64 kept, each failing at once with UNKNOWN_SERVER on a scope of its own; the one let go
 * takes its cache entries with it, and the scope asked again gets a new one.
 */
import { QueryClient } from '@tanstack/query-core';
import { afterEach, describe, expect, it } from 'vitest';
import { StandIns } from '../../src/servers/standIns';

const clients: QueryClient[] = [];
afterEach(() => {
  for (const client of clients.splice(0)) client.clear();
});

function standIns() {
  const queryClient = new QueryClient();
  clients.push(queryClient);
  return { queryClient, standIns: new StandIns(queryClient, 'servers/') };
}

describe('StandIns', () => {
  it('gives one stand-in per scope, whose reads fail at once with UNKNOWN_SERVER on a scope no server has', async () => {
    const { queryClient, standIns: all } = standIns();
    const sync = all.get('gone');
    expect(all.get('gone')).toBe(sync);
    expect(sync.keys.scope).toBe('servers/?gone');
    const error = await queryClient
      .fetchQuery({ ...sync.resourceQueryOptions('doc://x'), retry: false })
      .catch((caught: unknown) => caught);
    expect(error).toMatchObject({ code: 'UNKNOWN_SERVER' });
    expect(String((error as Error).message)).toContain('"gone"');
    all.dispose();
  });

  it('keeps the newest 64: the oldest goes with its cache entries, and asked again is made anew', async () => {
    const { queryClient, standIns: all } = standIns();
    const first = all.get('s0');
    await queryClient
      .fetchQuery({ ...first.resourceQueryOptions('doc://x'), retry: false })
      .catch(() => {});
    expect(
      queryClient.getQueryCache().findAll({ queryKey: first.keys.resource('doc://x') }),
    ).toHaveLength(1);
    const kept = all.get('s1');
    for (let i = 2; i <= 64; i += 1) all.get(`s${i}`);
    expect(all.get('s1')).toBe(kept);
    expect(
      queryClient.getQueryCache().findAll({ queryKey: first.keys.resource('doc://x') }),
    ).toHaveLength(0);
    expect(all.get('s0')).not.toBe(first);
    all.dispose();
  });
});
