/**
 * A server whose `tools/list` cannot be used: an error, something that is not a list, pages
 * without end. Before its first call on a client the package lists the tools (the SDK validates
 * structured output against its cached list, and on 2026-07-28 mirrors declared arguments into
 * headers from it), but only as a best effort: the call is made anyway, and answers.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { callTool } from '../../src/core/tools';
import type { JsonRpcMessage } from '../servers';
import { eventually } from '../support/wait';
import { HOSTILE_KINDS, type Hostile, startHostile } from './harness';

type Rewrite = (answer: JsonRpcMessage) => JsonRpcMessage;

const listError: Rewrite = (answer) => ({
  jsonrpc: '2.0',
  id: answer.id,
  error: { code: -32603, message: 'list is broken' },
});

let pages = 0;
const nextPage = () => {
  pages += 1;
  return `page ${pages}`;
};

const BAD_LISTS: { name: string; rewrite: Rewrite }[] = [
  { name: 'an error', rewrite: listError },
  {
    name: 'not a list',
    rewrite: (answer) =>
      'result' in answer
        ? { ...answer, result: { ...(answer.result as object), tools: 'nope' } }
        : answer,
  },
  // The SDK walks at most 64 pages (a page repeating the last one ends the walk), then throws.
  {
    name: 'pages without end',
    rewrite: (answer) => ({
      jsonrpc: '2.0',
      id: answer.id,
      // The fields a 2026-07-28 result must have: the server's answer to a page after the first
      // is an error (an unknown cursor), replaced too.
      result: {
        tools: [],
        nextCursor: nextPage(),
        resultType: 'complete',
        ttlMs: 0,
        cacheScope: 'private',
      },
    }),
  },
];

describe.each(HOSTILE_KINDS)(
  'tool calls on a $kind server whose tools/list is unusable',
  ({ kind }) => {
    let h: Hostile | undefined;
    afterEach(async () => {
      await h?.close();
      h = undefined;
    });

    const breakList = (rewrite: Rewrite) => ({
      rewrite: (message: JsonRpcMessage, exchange: { method: string | undefined }) =>
        exchange.method === 'tools/list' && ('result' in message || 'error' in message)
          ? rewrite(message)
          : undefined,
    });

    it.each(BAD_LISTS)(
      'a tool call does not depend on tools/list succeeding ($name)',
      async ({ rewrite }) => {
        h = await startHostile(kind, {}, breakList(rewrite));
        h.server.store.setTools([{ name: 'echo' }]);
        await h.sync.whenReady();
        const result = await callTool(h.sync, { name: 'echo', arguments: { x: 1 } });
        expect(h.proxy.stats('tools/call').requests).toBe(1);
        expect(result.content).toEqual([{ type: 'text', text: 'called echo with {"x":1}' }]);
      },
    );

    it('a tools/list that failed is not asked again before every call', async () => {
      h = await startHostile(kind, {}, breakList(listError));
      h.server.store.setTools([{ name: 'echo' }]);
      await h.sync.whenReady();
      await callTool(h.sync, { name: 'echo', arguments: { x: 1 } });
      await callTool(h.sync, { name: 'echo', arguments: { x: 2 } });
      expect(h.proxy.stats('tools/call').requests).toBe(2);
      expect(h.proxy.stats('tools/list').requests).toBe(1);
    });

    it('a call cancelled while the tools are being listed is not made', async () => {
      h = await startHostile(
        kind,
        {},
        { hold: (exchange) => (exchange.method === 'tools/list' ? 'hang' : undefined) },
      );
      h.server.store.setTools([{ name: 'echo' }]);
      await h.sync.whenReady();
      const controller = new AbortController();
      const call = callTool(h.sync, {
        name: 'echo',
        arguments: { x: 1 },
        signal: controller.signal,
      });
      await eventually(() => expect(h?.proxy.stats('tools/list').requests).toBe(1));
      controller.abort();
      await expect(call).rejects.toMatchObject({ code: 'CANCELLED' });
      expect(h.proxy.stats('tools/call').requests).toBe(0);
    });
  },
);
