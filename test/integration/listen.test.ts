import { QueryClient } from '@tanstack/query-core';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { McpCacheSync } from '../../src/core/mcpCacheSync';
import type { TestServer } from '../servers';
import { diagnosticsOf } from '../support/diagnostics';
import { start, text } from '../support/eras';
import { observeResource } from '../support/observe';
import { eventually, idle } from '../support/wait';

/** Whether the recording fetch logs reads too (`read <uri>` as each is sent). */
const reads = { logged: false };

/**
 * A fetch that records the life of every `subscriptions/listen` exchange as
 * the wire sees it: request sent, acknowledgement received, stream ended.
 */
function recordingFetch(log: string[]): typeof fetch {
  let listens = 0;
  return async (input, init) => {
    const body = typeof init?.body === 'string' ? init.body : '';
    const isListen = body.includes('"subscriptions/listen"');
    const id = isListen ? ++listens : 0;
    if (reads.logged && body.includes('"resources/read"')) {
      log.push(`read ${JSON.parse(body).params?.uri}`);
    }
    if (isListen) {
      const filter = JSON.parse(body).params?.notifications ?? {};
      log.push(`listen ${id} [${(filter.resourceSubscriptions ?? []).join(' ')}]`);
    }
    const response = await fetch(input, init);
    if (!isListen || !response.body) return response;
    const reader = response.body.getReader();
    const decoder = new TextDecoder();
    let acked = false;
    let ended = false;
    const end = () => {
      if (!ended) log.push(`end ${id}`);
      ended = true;
    };
    const stream = new ReadableStream<Uint8Array>({
      async pull(controller) {
        try {
          const { done, value } = await reader.read();
          if (done) {
            end();
            controller.close();
            return;
          }
          if (!acked && decoder.decode(value).includes('subscriptions/acknowledged')) {
            acked = true;
            log.push(`ack ${id}`);
          }
          controller.enqueue(value);
        } catch (error) {
          end();
          controller.error(error);
        }
      },
      cancel(reason) {
        end();
        return reader.cancel(reason);
      },
    });
    return new Response(stream, { status: response.status, headers: response.headers });
  };
}

describe('the 2026-07-28 listen stream', () => {
  let server: TestServer;
  let queryClient: QueryClient;
  let sync: McpCacheSync;
  const log: string[] = [];
  const unmounts: Array<() => void> = [];

  beforeEach(async () => {
    server = await start('modern');
    for (const uri of ['a://1', 'b://2', 'c://3', 'd://4']) server.store.upsert(text(uri, uri));
    queryClient = new QueryClient();
    log.length = 0;
    reads.logged = false;
    sync = new McpCacheSync({
      queryClient,
      url: server.url,
      lingerMs: 1000,
      fetch: recordingFetch(log),
    });
    sync.mount();
  });

  afterEach(async () => {
    for (const unmount of unmounts.splice(0)) unmount();
    await sync.dispose();
    queryClient.clear();
    await server.close();
  });

  const mount = (uri: string) => {
    const view = observeResource(sync, uri);
    unmounts.push(view.unmount);
    return view;
  };

  it('an addition gets a stream of its own; past three, the smallest is merged, acknowledged before it ends (make-before-break)', async () => {
    for (const [i, uri] of ['a://1', 'b://2', 'c://3'].entries()) {
      mount(uri);
      await eventually(() => expect(log).toContain(`ack ${i + 1}`));
    }
    await eventually(() => expect(server.openStreams()).toBe(3));
    mount('d://4');
    await eventually(() => expect(log).toContain('end 1'));
    expect(log.slice(0, 9)).toEqual([
      'listen 1 [a://1]',
      'ack 1',
      'listen 2 [b://2]',
      'ack 2',
      'listen 3 [c://3]',
      'ack 3',
      'listen 4 [a://1 d://4]',
      'ack 4',
      'end 1',
    ]);
    // The server notices the old stream's end a moment after the client aborts it.
    await eventually(() => expect(server.openStreams()).toBe(3));
    expect(server.subscribedUris()).toEqual(['a://1', 'b://2', 'c://3', 'd://4']);
  });

  it('the reads an acknowledgement releases are sent before the stream it replaced is closed', async () => {
    for (const [i, uri] of ['a://1', 'b://2', 'c://3'].entries()) {
      mount(uri);
      await eventually(() => expect(log).toContain(`ack ${i + 1}`));
    }
    reads.logged = true;
    const view = mount('d://4');
    await eventually(() => expect(log).toContain('end 1'));
    await eventually(() => expect(view.text()).toBe('d://4'));
    const after = log.slice(log.indexOf('ack 4'));
    expect(after.indexOf('read d://4')).toBeGreaterThan(0);
    expect(after.indexOf('read d://4')).toBeLessThan(after.indexOf('end 1'));
    await eventually(() => expect(server.openStreams()).toBe(3));
  });

  it('batches the changes of one tick into one new stream, with the URIs sorted', async () => {
    mount('c://3');
    mount('a://1');
    mount('b://2');
    // Once all three are covered, every listen request that covers them has been sent.
    await eventually(() =>
      expect(diagnosticsOf(sync)?.resources.map((r) => r.acknowledged)).toEqual([true, true, true]),
    );
    expect(log).toEqual(['listen 1 [a://1 b://2 c://3]', 'ack 1']);
  });

  it('a URI already covered is not re-read when a merge moves it to another stream', async () => {
    const a = mount('a://1');
    await eventually(() => expect(a.text()).toBe('a://1'));
    await eventually(() => expect(log).toContain('ack 1'));
    for (const [i, uri] of ['b://2', 'c://3', 'd://4'].entries()) {
      mount(uri);
      await eventually(() => expect(log).toContain(`ack ${i + 2}`));
    }
    await eventually(() => expect(log).toContain('end 1'));
    await eventually(() => expect(diagnosticsOf(sync)?.resources[1]?.acknowledged).toBe(true));
    await idle(queryClient);
    expect(server.store.reads('a://1')).toBe(1);
    expect(server.store.reads('b://2')).toBe(1);
  });

  it('a stream is cancelled by closing it: no notifications/cancelled POST (Streamable HTTP, 2026-07-28)', async () => {
    for (const [i, uri] of ['a://1', 'b://2', 'c://3', 'd://4'].entries()) {
      mount(uri);
      await eventually(() => expect(log).toContain(`ack ${i + 1}`));
    }
    // The fourth addition merged the first stream away: it ended, and the server knows.
    await eventually(() => expect(log).toContain('end 1'));
    await eventually(() => expect(server.openStreams()).toBe(3));
    for (const unmount of unmounts.splice(0)) unmount();
    await sync.dispose();
    await eventually(() => expect(server.openStreams()).toBe(0));
    expect(server.subscribedUris()).toEqual([]);
    expect(server.counters().methods['notifications/cancelled']).toBeUndefined();
  });

  it('a list that loads its next page once the last one shows: merges log-structured, not a smallest-stream re-send per page', async () => {
    const pages = 40;
    const all = Array.from({ length: pages * 10 }, (_, i) => `p://${String(i).padStart(3, '0')}`);
    for (const uri of all) server.store.upsert(text(uri, uri));
    for (let page = 0; page < pages; page++) {
      const views = all.slice(page * 10, page * 10 + 10).map((uri) => mount(uri));
      for (const [i, view] of views.entries()) {
        await eventually(() => expect(view.text()).toBe(all[page * 10 + i]));
      }
    }
    const entries = log
      .filter((line) => line.startsWith('listen '))
      .reduce(
        (sum, line) =>
          sum +
          line
            .slice(line.indexOf('[') + 1, -1)
            .split(' ')
            .filter(Boolean).length,
        0,
      );
    // Deterministic: no page can bring newcomers while the plan waits. Waiting out the quiet before
    // each cheapest merge sent 2,870 entries here (7.2 per URI) and took ~4x as long.
    expect(entries).toBeLessThanOrEqual(4 * all.length);
    expect(server.subscribedUris()).toEqual(all);
  });

  it('the stream carries list_changed only: no URIs, still one stream', async () => {
    await eventually(() => expect(log).toContain('ack 1'));
    expect(log[0]).toBe('listen 1 []');
    expect(diagnosticsOf(sync)?.listAcknowledged).toBe(true);
  });
});
