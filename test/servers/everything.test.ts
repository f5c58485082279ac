// @vitest-environment node
/**
 * The reference server (`@modelcontextprotocol/server-everything`) as the tests host it: on
 * 127.0.0.1, a 2025 server with prompts, completions, logging and tasks. If this fails, the
 * integration tests that use it say nothing about the package.
 */
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterEach, expect, it } from 'vitest';
import { type EverythingServer, startEverythingServer } from './everything';

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => {});
});

it('serves the reference server on loopback, with the capabilities the tests rely on', async () => {
  const server: EverythingServer = await startEverythingServer();
  cleanups.push(() => server.close());
  expect(new URL(server.url).hostname).toBe('127.0.0.1');
  const client = new Client({ name: 't', version: '1' }, { versionNegotiation: { mode: 'auto' } });
  cleanups.push(() => client.close());
  await client.connect(new StreamableHTTPClientTransport(new URL(server.url)));
  expect(client.getProtocolEra()).toBe('legacy');
  expect(client.getServerCapabilities()).toMatchObject({
    prompts: {},
    completions: {},
    logging: {},
    tasks: { list: {}, cancel: {}, requests: { tools: { call: {} } } },
  });
  const prompt = await client.getPrompt({ name: 'args-prompt', arguments: { city: 'Paris' } });
  expect(prompt.messages[0]?.content).toMatchObject({ text: "What's weather in Paris?" });
  const completed = await client.complete({
    ref: { type: 'ref/prompt', name: 'completable-prompt' },
    argument: { name: 'department', value: 'E' },
  });
  expect(completed.completion.values).toEqual(['Engineering']);
  expect(server.methods()['completion/complete']).toBe(1);
  expect(server.liveSessions()).toBe(1);
});
