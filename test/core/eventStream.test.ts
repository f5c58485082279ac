import { describe, expect, it, vi } from 'vitest';
import { type Watch, watchEvents } from '../../src/core/eventStream';

const UPDATED = 'notifications/resources/updated';
const update = (uri: unknown, id?: string) =>
  `${id === undefined ? '' : `id: ${id}\n`}data: ${JSON.stringify({ jsonrpc: '2.0', method: UPDATED, params: { uri } })}\n\n`;

/** The text that comes out of `watchEvents` when `chunks` go in (split anywhere). */
async function through(chunks: string[], watch: Partial<Watch> = {}) {
  const encoder = new TextEncoder();
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(encoder.encode(chunk));
      controller.close();
    },
  });
  const onEnd = vi.fn();
  const out = watchEvents(body, { onEnd, ...watch });
  const text = await new Response(out).text();
  return { text, onEnd };
}

/** Every way to cut `text` in two. */
const cuts = (text: string) =>
  Array.from({ length: text.length + 1 }, (_, i) => [text.slice(0, i), text.slice(i)]);

describe('watchEvents', () => {
  it('passes the bytes unchanged when nothing is filtered, and reports the end once', async () => {
    const text = `${update('a://1', '7')}: comment\n\n${update('b://2')}`;
    const { text: out, onEnd } = await through([text.slice(0, 10), text.slice(10)]);
    expect(out).toBe(text);
    expect(onEnd).toHaveBeenCalledTimes(1);
  });

  it.each([
    ['only its end is watched', {}],
    ['its events are looked into', { onEventId: () => {} }],
  ])('reports the end once when the body fails or the reader cancels (%s)', async (_, watch) => {
    const failing = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(new TextEncoder().encode(update('a://1')));
        controller.error(new Error('connection reset'));
      },
    });
    const failed = vi.fn();
    await expect(
      new Response(watchEvents(failing, { onEnd: failed, ...watch })).text(),
    ).rejects.toThrow('connection reset');
    expect(failed).toHaveBeenCalledTimes(1);

    let cancelledWith: unknown;
    const open = new ReadableStream<Uint8Array>({
      cancel(reason) {
        cancelledWith = reason;
      },
    });
    const cancelled = vi.fn();
    await watchEvents(open, { onEnd: cancelled, ...watch }).cancel('gone');
    await vi.waitFor(() => expect(cancelled).toHaveBeenCalledTimes(1));
    expect(cancelledWith).toBe('gone');
  });

  it('drops the updates nobody wants, wherever the chunks are cut, and counts each', async () => {
    const kept = `retry: 10\n\n${update('a://1', '1')}`;
    const text = `${update('nobody://1', '2')}${kept}${update('nobody://2', '3')}`;
    for (const chunks of cuts(text)) {
      const dropped = vi.fn();
      const ids: string[] = [];
      const { text: out } = await through(chunks, {
        filter: { relevant: (uri) => uri === 'a://1', dropped },
        onEventId: (id) => ids.push(id),
      });
      expect(out).toBe(kept);
      expect(dropped.mock.calls).toEqual([['nobody://1'], ['nobody://2']]);
      // Only the events that pass move the stream's id (a resumption replays the rest).
      expect(ids).toEqual(['1']);
    }
  });

  it('drops with CRLF and CR line ends too', async () => {
    const crlf = update('nobody://1').replaceAll('\n', '\r\n');
    const cr = update('nobody://2').replaceAll('\n', '\r');
    const dropped = vi.fn();
    const { text } = await through([crlf, cr, update('a://1')], {
      filter: { relevant: (uri) => uri === 'a://1', dropped },
    });
    expect(text).toBe(update('a://1'));
    expect(dropped).toHaveBeenCalledTimes(2);
  });

  // A line may end in LF and the blank line after it in CRLF (or CR): the event ends there, as
  // the SDK's parser reads it. Such an event was held back until another end of the three
  // spellings came, or 4 KiB more: with every event so written, each waited for the next.
  it.each([
    ['LF then CRLF', '\n\r\n'],
    ['LF then CR', '\n\r'],
    ['CRLF then LF', '\r\n\n'],
    ['CRLF then CR', '\r\n\r'],
  ])('hands an event over as soon as it ends, whatever its line ends mix (%s)', async (_, end) => {
    const first = `id: 1\ndata: {"jsonrpc":"2.0","method":"${UPDATED}","params":{"uri":"a://1"}}${end}`;
    const second = update('a://2', '2');
    let pulls = 0;
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        pulls += 1;
        controller.enqueue(new TextEncoder().encode(pulls === 1 ? first : second));
        if (pulls === 2) controller.close();
      },
    });
    const ids: string[] = [];
    const reader = watchEvents(body, {
      onEnd: () => {},
      onEventId: (id) => ids.push(id),
      filter: { relevant: () => true, dropped: () => {} },
    }).getReader();
    const { value } = await reader.read();
    expect(new TextDecoder().decode(value)).toBe(first);
    expect(ids).toEqual(['1']);
    await reader.cancel();
  });

  it('lets through what could matter or cannot be read cheaply: malformed, batched, requests, long, unfinished', async () => {
    const filter = { relevant: () => false, dropped: vi.fn() };
    const passing = [
      `data: ${JSON.stringify({ jsonrpc: '2.0', method: UPDATED, params: {} })}\n\n`,
      `data: ${JSON.stringify({ jsonrpc: '2.0', method: UPDATED, params: { uri: '' } })}\n\n`,
      `data: ${JSON.stringify({ jsonrpc: '2.0', method: UPDATED, params: { uri: 42 } })}\n\n`,
      `data: ${JSON.stringify([{ jsonrpc: '2.0', method: UPDATED, params: { uri: 'x://1' } }])}\n\n`,
      `data: ${JSON.stringify({ jsonrpc: '2.0', id: 3, method: UPDATED, params: { uri: 'x://1' } })}\n\n`,
      `data: {"jsonrpc":"2.0","method":"${UPDATED}",\n\n`,
      update(`x://${'y'.repeat(10_000)}`),
    ];
    const unfinished = `data: ${JSON.stringify({ jsonrpc: '2.0', method: UPDATED, params: { uri: 'x://2' } })}\n`;
    const text = [...passing, unfinished].join('');
    const { text: out } = await through([text.slice(0, 5000), text.slice(5000)], { filter });
    expect(out).toBe(text);
    expect(filter.dropped).not.toHaveBeenCalled();
  });

  it('a "uri" elsewhere in the message decides nothing alone: only params.uri can drop it', async () => {
    const message = (meta: string, uri: string) =>
      `data: ${JSON.stringify({ jsonrpc: '2.0', method: UPDATED, _meta: { uri: meta }, params: { uri } })}\n\n`;
    const dropped = vi.fn();
    const filter = { relevant: (uri: string) => uri === 'a://1', dropped };
    const wanted = message('nobody://1', 'a://1');
    const decoy = message('a://1', 'nobody://2');
    const { text } = await through([wanted, decoy, message('nobody://3', 'nobody://4')], {
      filter,
    });
    // The decoy passes (passing is always safe); the unwanted one is dropped.
    expect(text).toBe(wanted + decoy);
    expect(dropped.mock.calls).toEqual([['nobody://4']]);
  });

  it('an event too long to look into passes as it comes, and the next one is still looked into', async () => {
    const long = update(`x://${'y'.repeat(50_000)}`, '9');
    const chunks = [long.slice(0, 20_000), long.slice(20_000, 40_000), long.slice(40_000)];
    const dropped = vi.fn();
    const ids: string[] = [];
    const { text } = await through([...chunks, update('nobody://1', '10')], {
      filter: { relevant: () => false, dropped },
      onEventId: (id) => ids.push(id),
    });
    expect(text).toBe(long);
    expect(dropped).toHaveBeenCalledWith('nobody://1');
    expect(ids).toEqual(['9']);
  });
});
