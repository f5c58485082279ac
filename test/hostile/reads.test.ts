/**
 * A server whose `resources/read` answers cannot be used: nothing, someone else's content, an
 * error, something that is not a read result, or no answer at all. The content shown before must
 * stay, the error must be visible, a hang must end at the request timeout, and the query must be
 * usable again afterwards (not stuck fetching, not retrying forever).
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { JsonRpcMessage } from '../servers';
import { eventually, idle } from '../support/wait';
import { HOSTILE_KINDS, type Hostile, isReadOf, startHostile, URI } from './harness';

const REQUEST_TIMEOUT_MS = 300;
/**
 * For the answers that are not about time: a timeout that a loaded machine can reach would cut a
 * stream or a read short, and the reconnect's catch-up read would blur the count.
 */
const GENEROUS_TIMEOUT_MS = 10_000;
// TanStack's retries under the library's policy: the first attempt and three more.
const MAX_ATTEMPTS = 4;

type Rewrite = (answer: JsonRpcMessage & { result: Record<string, unknown> }) => JsonRpcMessage;

interface BadAnswer {
  name: string;
  rewrite: Rewrite;
  error: RegExp;
  /** Reads a failure costs: retried unless the error says retrying cannot help. */
  attempts: number;
}

const BAD_ANSWERS: BadAnswer[] = [
  {
    name: 'empty contents',
    rewrite: (answer) => ({ ...answer, result: { ...answer.result, contents: [] } }),
    error: /no contents/,
    attempts: 1, // an answer that is not content: asking again cannot help
  },
  {
    name: 'the contents of another URI',
    rewrite: (answer) => ({
      ...answer,
      result: {
        ...answer.result,
        contents: [{ uri: 'other://x', mimeType: 'text/plain', text: 'not yours' }],
      },
    }),
    error: /contents for other:\/\/x/,
    attempts: 1,
  },
  {
    name: 'an internal error',
    rewrite: (answer) => ({
      jsonrpc: '2.0',
      id: answer.id,
      error: { code: -32603, message: 'disk on fire' },
    }),
    error: /disk on fire/,
    attempts: MAX_ATTEMPTS,
  },
  {
    name: 'not found, for a resource that was there',
    rewrite: (answer) => ({
      jsonrpc: '2.0',
      id: answer.id,
      error: { code: -32602, message: 'Resource not found' },
    }),
    error: /not found/,
    attempts: 1,
  },
  {
    name: 'something that is not a read result',
    rewrite: (answer) => ({ ...answer, result: { contents: 'nope', ttlMs: 'soon' } }),
    error: /./,
    attempts: MAX_ATTEMPTS,
  },
];

describe.each(HOSTILE_KINDS)('hostile read answers from the $kind server', ({ kind }) => {
  let h: Hostile | undefined;

  afterEach(async () => {
    await h?.close();
    h = undefined;
  });

  async function ready(options?: { retry?: boolean }, requestTimeoutMs = REQUEST_TIMEOUT_MS) {
    h = await startHostile(kind, { requestTimeoutMs });
    const view = h.mount(URI, options);
    await h.acknowledged(URI);
    await eventually(() => expect(view.text()).toBe('v1'));
    await idle(h.queryClient);
    return { hostile: h, view, reads: h.server.store.reads(URI) };
  }

  it.each(BAD_ANSWERS)(
    'a read answered with $name keeps the old content and exposes the error',
    async ({ rewrite, error, attempts }) => {
      const { hostile, view, reads } = await ready(undefined, GENEROUS_TIMEOUT_MS);
      hostile.proxy.setRules({
        rewrite: (message, exchange) =>
          isReadOf(exchange, URI) && 'result' in message
            ? rewrite(message as Parameters<Rewrite>[0])
            : undefined,
      });
      hostile.server.setText(URI, 'v2');
      await eventually(() => expect(view.result().error?.message).toMatch(error));
      // TanStack's shape of "failed, previous data kept": status error, data still there.
      expect(view.text()).toBe('v1');
      // Retries happen inside the fetch: once it is idle with an error, every attempt was made.
      expect(view.result()).toMatchObject({
        status: 'error',
        fetchStatus: 'idle',
        failureCount: attempts,
      });
      expect(hostile.resource(URI)?.lastError).toMatch(error);
      await idle(hostile.queryClient);
      expect(hostile.server.store.reads(URI) - reads).toBe(attempts);

      // The server mends its ways: the next change is shown and the error is gone.
      hostile.proxy.setRules(undefined);
      hostile.server.setText(URI, 'v3');
      await eventually(() => expect(view.text()).toBe('v3'));
      expect(view.result().error).toBeNull();
    },
  );

  it('a read that is never answered ends at the request timeout and keeps the old content', async () => {
    // No retries here: the bound under test is the request timeout of one attempt.
    const { hostile, view, reads } = await ready({ retry: false });
    hostile.proxy.setRules({ hold: (exchange) => (isReadOf(exchange, URI) ? 'hang' : undefined) });
    const started = Date.now();
    hostile.server.setText(URI, 'v2');
    await eventually(() => expect(view.result().error).toBeTruthy());
    expect(Date.now() - started).toBeLessThan(REQUEST_TIMEOUT_MS + 1000);
    expect(view.result().error?.message).toMatch(/time/i);
    expect(view.text()).toBe('v1');
    expect(view.result().fetchStatus).toBe('idle');
    expect(hostile.server.store.reads(URI) - reads).toBe(1);

    hostile.proxy.setRules(undefined);
    hostile.server.setText(URI, 'v3');
    await eventually(() => expect(view.text()).toBe('v3'));
    expect(view.result().error).toBeNull();
    expect(view.result().fetchStatus).toBe('idle');
  });

  it('a very slow read that ends inside the timeout still lands', async () => {
    const { hostile, view } = await ready();
    hostile.proxy.setRules({
      hold: (exchange) => (isReadOf(exchange, URI) ? REQUEST_TIMEOUT_MS / 2 : undefined),
    });
    hostile.server.setText(URI, 'v2');
    await eventually(() => expect(view.text()).toBe('v2'));
    expect(view.result().error).toBeNull();
  });

  // Guards a fixed bug (legacy only): a timed-out read leaves its HTTP request open. On the 2025 era the SDK
  // cancels with notifications/cancelled but never aborts the POST (Protocol.request only has a
  // per-request abort for modern per-request streams), and the library's query signal is not
  // aborted by the timeout either. Against a server that never answers, every abandoned read
  // holds a connection; a browser's ~6 per host run out and starve every later request.
  it('a read given up at the timeout releases its HTTP request', async () => {
    const { hostile, view } = await ready({ retry: false });
    hostile.proxy.setRules({
      hold: (exchange) => (isReadOf(exchange, URI) ? 'hang' : undefined),
    });
    hostile.server.setText(URI, 'v2');
    await eventually(() => expect(view.result().error).toBeTruthy());
    // Ended a moment (2 s) after the cancellation, so the server can still say what it must.
    await eventually(() => expect(hostile.proxy.stats('resources/read').inFlight).toBe(0), {
      timeout: 4000,
    });
  });
});
