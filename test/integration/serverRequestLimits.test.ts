/**
 * What a server may ask of the client, bounded (issue 17, item 9), on the three real servers: a
 * server cannot pile up questions without limit, cannot have the app render a link that runs
 * script (URL-mode elicitation), and gets answers that match what it asked for (types,
 * required fields, enums) — or an error, never content it did not ask for.
 */
import type { CallToolResult } from '@modelcontextprotocol/client';
import { QueryClient } from '@tanstack/query-core';
import { afterEach, describe, expect, it } from 'vitest';
import {
  callTool,
  createServerRequests,
  type PendingElicitation,
  type ServerRequestOptions,
} from '../../src';
import { McpCacheSync } from '../../src/core/mcpCacheSync';
import type { ElicitSchema, StoredTool } from '../servers';
import { ERA_CASES, start } from '../support/eras';
import { eventually } from '../support/wait';

/** The most elicitations one connection keeps waiting for the user (serverRequests.ts). */
const CAP = 8;

const FORM: ElicitSchema = {
  type: 'object',
  properties: {
    name: { type: 'string', title: 'Name' },
    age: { type: 'integer', title: 'Age' },
    color: { type: 'string', enum: ['red', 'green'] },
    size: {
      type: 'string',
      oneOf: [
        { const: 's', title: 'Small' },
        { const: 'l', title: 'Large' },
      ],
    },
    toppings: { type: 'array', items: { type: 'string', enum: ['cheese', 'olives'] } },
    agree: { type: 'boolean' },
  },
  required: ['name', 'agree'],
};

const LINKS: Record<string, string> = {
  js: 'javascript:alert(document.cookie)',
  data: 'data:text/html,<script>alert(1)</script>',
  plain: 'http://evil.example/consent',
  file: 'file:///etc/passwd',
  https: 'https://auth.example.com/consent?id=1',
  localhost: 'http://localhost:8080/consent',
  loopback: 'http://127.0.0.1:8080/consent',
};

const TOOLS: StoredTool[] = [
  { name: 'ask', elicit: { message: 'Who are you?', requestedSchema: FORM } },
  ...Object.entries(LINKS).map(([name, url]) => ({
    name: `go-${name}`,
    elicit: { message: `Go to ${name}`, url },
  })),
];

const textOf = (result: CallToolResult | undefined) => {
  const first = result?.content[0];
  return first?.type === 'text' ? first.text : undefined;
};

const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const close of cleanups.splice(0).reverse()) await close();
});

async function connect(kind: (typeof ERA_CASES)[number]['kind'], options: ServerRequestOptions) {
  const server = await start(kind);
  server.store.setTools(TOOLS);
  cleanups.push(() => server.close());
  const requests = createServerRequests(options);
  const sync = new McpCacheSync({
    queryClient: new QueryClient(),
    url: server.url,
    serverRequests: requests,
  });
  cleanups.push(() => sync.dispose());
  sync.mount();
  // A form is mounted: questions wait for it. Every question ever shown is recorded.
  const shown: PendingElicitation[] = [];
  const stop = requests.subscribeElicitations(() => {
    for (const entry of requests.getElicitations()) if (!shown.includes(entry)) shown.push(entry);
  });
  cleanups.push(stop);
  return { server, sync, requests, shown };
}

describe.each(ERA_CASES)('server requests, bounded ($kind)', ({ kind, era }) => {
  it(`at most ${CAP} elicitations wait per connection; past that the server is declined at once`, async () => {
    const { sync, requests } = await connect(kind, { elicitation: true });
    const calls = Array.from({ length: CAP + 2 }, () => callTool(sync, { name: 'ask' }));
    const settled: string[] = [];
    for (const call of calls) {
      void call.then((result) => settled.push(String(textOf(result)))).catch(() => {});
    }
    // Ten calls at once, each a round trip or two: on a loaded machine that takes a while.
    const patiently = { timeout: 20_000 };
    await eventually(
      () => expect(settled).toEqual(['answered decline', 'answered decline']),
      patiently,
    );
    await eventually(() => expect(requests.getElicitations()).toHaveLength(CAP), patiently);
    for (const entry of requests.getElicitations()) entry.decline();
    await eventually(() => expect(settled).toHaveLength(CAP + 2), patiently);
    // Answered, the cap frees up again.
    const next = callTool(sync, { name: 'ask' });
    await eventually(() => expect(requests.getElicitations()).toHaveLength(1));
    requests.getElicitations()[0]?.cancel();
    expect(textOf(await next)).toBe('answered cancel');
  });

  it('URL mode: only https (and http on this machine) reaches the app; javascript:, data:, file: and plain http are declined', async () => {
    const { sync, requests, shown } = await connect(kind, {
      elicitation: { form: true, url: true },
    });
    for (const name of ['js', 'data', 'plain', 'file']) {
      expect(textOf(await callTool(sync, { name: `go-${name}` }))).toBe('answered decline');
    }
    expect(shown).toEqual([]);
    for (const name of ['https', 'localhost', 'loopback']) {
      const call = callTool(sync, { name: `go-${name}` });
      await eventually(() => expect(requests.getElicitations()).toHaveLength(1));
      expect(requests.getElicitations()[0]?.params).toMatchObject({
        mode: 'url',
        url: LINKS[name],
      });
      requests.getElicitations()[0]?.accept();
      expect(textOf(await call)).toBe('answered accept');
    }
  });

  it('an answer that does not fit the requested schema is refused before anything is sent; a fitting one is sent', async () => {
    const { server, sync, requests } = await connect(kind, { elicitation: true });
    const call = callTool(sync, { name: 'ask' });
    let answered = false;
    void call
      .then(() => {
        answered = true;
      })
      .catch(() => {});
    await eventually(() => expect(requests.getElicitations()).toHaveLength(1));
    const entry = requests.getElicitations()[0] as PendingElicitation;
    const calls = server.counters().toolCalls;
    const refused: Array<[Record<string, unknown>, RegExp]> = [
      [{ agree: true }, /name.*required/],
      [{ name: 'Ada' }, /agree.*required/],
      [{ name: 42, agree: true }, /name.*string/],
      [{ name: 'Ada', agree: 'yes' }, /agree.*boolean/],
      [{ name: 'Ada', agree: true, age: 36.5 }, /age.*integer/],
      [{ name: 'Ada', agree: true, age: '36' }, /age.*integer/],
      [{ name: 'Ada', agree: true, color: 'blue' }, /color.*one of/],
      [{ name: 'Ada', agree: true, size: 'm' }, /size.*one of/],
      [{ name: 'Ada', agree: true, toppings: ['cheese', 'ham'] }, /toppings.*one of/],
      [{ name: 'Ada', agree: true, toppings: 'cheese' }, /toppings.*array/],
      [{ name: 'Ada', agree: true, password: 'hunter2' }, /password.*not asked/],
    ];
    for (const [content, problem] of refused) {
      expect(() => entry.accept(content)).toThrow(problem);
    }
    expect(answered).toBe(false);
    expect(requests.getElicitations()).toEqual([entry]);
    expect(server.counters().toolCalls).toBe(calls);

    const fits = {
      name: 'Ada',
      agree: true,
      age: 36,
      color: 'red',
      size: 'l',
      toppings: ['olives'],
    };
    entry.accept(fits);
    // The fitting answer is the fence: a misfit sent before it would have been the one the
    // server took (2025: the answer to its request), or a retry of its own (2026-07-28).
    expect(textOf(await call)).toBe(`answered accept ${JSON.stringify(fits)}`);
    expect(answered).toBe(true);
    expect(server.counters().toolCalls - calls).toBe(era === 'modern' ? 1 : 0);
  });

  it("another tab's answer is checked the same way: a misfit is ignored and the question stays", async () => {
    const { sync, requests } = await connect(kind, { elicitation: true });
    const call = callTool(sync, { name: 'ask' });
    await eventually(() => expect(requests.getElicitations()).toHaveLength(1));
    const { id } = requests.getElicitations()[0] as PendingElicitation;
    requests.answer(id, { action: 'accept', content: { name: 42, agree: true } });
    expect(requests.getElicitations().map((entry) => entry.id)).toEqual([id]);
    requests.answer(id, { action: 'accept', content: { name: 'Grace', agree: false } });
    expect(textOf(await call)).toBe('answered accept {"name":"Grace","agree":false}');
  });

  it('an onElicitation answer that does not fit is never sent: the server (2025) or the call (2026-07-28) gets the error', async () => {
    const { server, sync } = await connect(kind, {
      onElicitation: async () => ({ action: 'accept', content: { name: 'Ada', agree: 'yes' } }),
    });
    const outcome = await callTool(sync, { name: 'ask' }).then(textOf, (error: Error) => error);
    if (era === 'legacy') {
      // The answer to the server's request is a JSON-RPC error.
      expect(outcome).toMatch(/^elicitation\/create failed: -?\d+ .*agree must be a boolean/);
    } else {
      // input_required carries answers only: the call ends here, the retry is never sent.
      expect(String(outcome)).toMatch(/agree must be a boolean/);
      expect(server.counters().toolCalls).toBe(1);
    }
  });
});
