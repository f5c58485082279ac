import { describe, expect, it } from 'vitest';
import { withHeaders } from '../../src/servers/runtime';

describe("a server's headers", () => {
  const sent: Array<{ url: string; key: string | null; accept: string | null }> = [];
  const base: typeof fetch = async (input, init) => {
    const headers = new Headers(init?.headers);
    sent.push({ url: String(input), key: headers.get('x-key'), accept: headers.get('accept') });
    return new Response('{}');
  };
  const send = withHeaders(base, 'https://mcp.example/v1/mcp', { 'x-key': 'secret' });

  it('go with every request to the server’s origin, beside the transport’s own', async () => {
    sent.length = 0;
    await send('https://mcp.example/v1/mcp', { headers: { accept: 'text/event-stream' } });
    await send('https://mcp.example/.well-known/oauth-protected-resource/v1/mcp');
    expect(sent).toEqual([
      { url: 'https://mcp.example/v1/mcp', key: 'secret', accept: 'text/event-stream' },
      {
        url: 'https://mcp.example/.well-known/oauth-protected-resource/v1/mcp',
        key: 'secret',
        accept: null,
      },
    ]);
  });

  it('never go to another origin (an authorization server, a redirect target)', async () => {
    sent.length = 0;
    await send('https://auth.example/token', { method: 'POST' });
    await send('http://mcp.example/v1/mcp');
    expect(sent.map((request) => request.key)).toEqual([null, null]);
  });
});
