#!/usr/bin/env node
// What the bare @modelcontextprotocol/client throws from connect() when the URL is not an MCP
// endpoint. Tiny node:http servers on 127.0.0.1, each case under versionNegotiation 'auto' and
// the default ('legacy'). Prints one JSON line per case; `--table` prints a Markdown table.
//
//   node conformance/probes/connect-errors.mjs [--table]
//
// Measurement only (conformance/NOTES.md §3 quotes its output); not part of any test run.

import { createServer } from 'node:http';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';

const HOST = '127.0.0.1';

function listen(handler) {
  return new Promise((resolve) => {
    const server = createServer(handler);
    server.listen(0, HOST, () => resolve(server));
  });
}

const body = (res, status, type, text) => {
  res.writeHead(status, type ? { 'content-type': type } : {});
  res.end(text);
};

const cases = [
  { name: 'closed port', closed: true },
  { name: '404, empty body', handler: (_q, s) => body(s, 404, undefined, '') },
  {
    name: '404, HTML body',
    handler: (_q, s) => body(s, 404, 'text/html', '<html><body>Cannot POST /mcp</body></html>'),
  },
  {
    name: '500, HTML body',
    handler: (_q, s) =>
      body(s, 500, 'text/html', '<html><body><h1>Internal Server Error</h1></body></html>'),
  },
  {
    name: '200, HTML (not JSON)',
    handler: (_q, s) =>
      body(s, 200, 'text/html', '<!doctype html><html><body>SPA index</body></html>'),
  },
  {
    name: '200, JSON content-type, non-JSON body',
    handler: (_q, s) => body(s, 200, 'application/json', 'not json'),
  },
  { name: '405, empty body', handler: (_q, s) => body(s, 405, undefined, '') },
  {
    name: '400, text body',
    handler: (_q, s) => body(s, 400, 'text/plain', 'Bad Request'),
  },
  {
    name: '401 + WWW-Authenticate, no authProvider',
    handler: (_q, s) => {
      s.writeHead(401, { 'www-authenticate': 'Bearer realm="mcp"' });
      s.end();
    },
  },
  { name: '403, empty body', handler: (_q, s) => body(s, 403, undefined, '') },
  { name: "URL string 'not a url'", url: 'not a url' },
];

function describe(error, depth = 0) {
  if (error === undefined || error === null) return error;
  if (typeof error !== 'object') return String(error);
  const out = {
    class: error.constructor?.name,
    name: error.name,
    message: error.message,
  };
  if (error.code !== undefined) out.code = error.code;
  if (error.data !== undefined) out.data = error.data;
  if (error.status !== undefined) out.status = error.status;
  if (error.cause !== undefined && depth < 3) out.cause = describe(error.cause, depth + 1);
  return out;
}

async function probe(kase, mode) {
  let server;
  let url;
  if (kase.url !== undefined) {
    url = kase.url;
  } else {
    server = await listen(kase.handler ?? (() => {}));
    url = `http://${HOST}:${server.address().port}/mcp`;
    if (kase.closed) await new Promise((r) => server.close(r));
  }
  const onerror = [];
  const started = performance.now();
  const result = { case: kase.name, mode };
  try {
    // The transport wants a URL; an invalid string fails in new URL() before the SDK is reached.
    const target = (() => {
      try {
        return new URL(url);
      } catch (error) {
        result.newURL = describe(error);
        return url; // also try what the SDK does with the raw string
      }
    })();
    const transport = new StreamableHTTPClientTransport(target);
    transport.onerror = (e) => onerror.push(describe(e));
    const client = new Client(
      { name: 'probe', version: '0' },
      mode === 'auto' ? { versionNegotiation: { mode: 'auto' } } : {},
    );
    await client.connect(transport);
    result.outcome = 'connected?!';
    await client.close();
  } catch (error) {
    result.outcome = 'threw';
    result.error = describe(error);
  } finally {
    result.ms = Math.round(performance.now() - started);
    result.transportOnerror = onerror;
    if (server?.listening) {
      server.closeAllConnections?.();
      await new Promise((r) => server.close(r));
    }
  }
  return result;
}

const results = [];
for (const kase of cases) {
  for (const mode of ['auto', 'legacy']) results.push(await probe(kase, mode));
}

if (process.argv.includes('--table')) {
  const esc = (s) => String(s ?? '').replaceAll('|', '\\|');
  console.log('| case | mode | class / name | code | data.status | message |');
  console.log('|---|---|---|---|---|---|');
  for (const r of results) {
    const e = r.error ?? {};
    const cause = e.cause
      ? ` (cause: ${e.cause.class} ${e.cause.code ?? ''} ${e.cause.message ?? ''}${e.cause.cause ? ` ← ${e.cause.cause.code ?? e.cause.cause.class}` : ''})`
      : '';
    console.log(
      `| ${esc(r.case)} | ${r.mode} | ${esc(e.class)} / ${esc(e.name)} | ${esc(e.code)} | ${esc(e.data?.status)} | ${esc(e.message)}${esc(cause)} |`,
    );
  }
} else {
  for (const r of results) console.log(JSON.stringify(r));
}
