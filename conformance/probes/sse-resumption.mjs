#!/usr/bin/env node
// How the bare @modelcontextprotocol/client resumes a dropped standalone SSE GET stream
// (2025-era session), and what it reports when resumption fails. A hand-rolled 2025 server on
// 127.0.0.1 primes the GET stream with `id` + `retry: 300`, sends one notification, then ends the
// stream. What the reconnect GET (with Last-Event-ID) gets depends on the case:
//
//   resume        200 + the missed notification (the session is still there)
//   session-gone  404 (the server forgot the session)
//   server-down   the server stops listening (connection refused)
//   no-retry      as `resume`, but the priming event has no `retry:` (client backoff applies)
//
// For each case: every GET (time since the drop, Last-Event-ID, status), every transport onerror
// and onclose, the notifications delivered, and whether a later request still works.
//
//   node conformance/probes/sse-resumption.mjs
//
// Measurement only (conformance/NOTES.md §3 quotes its output).

import { createServer } from 'node:http';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';

const HOST = '127.0.0.1';
const SESSION = 'probe-session';

function startServer(kase, log) {
  let gets = 0;
  let droppedAt;
  const server = createServer((req, res) => {
    if (req.method === 'GET') {
      gets++;
      const lastEventId = req.headers['last-event-id'];
      const t = droppedAt === undefined ? 0 : Math.round(performance.now() - droppedAt);
      if (gets === 1) {
        res.writeHead(200, { 'content-type': 'text/event-stream', 'mcp-session-id': SESSION });
        const retry = kase === 'no-retry' ? '' : 'retry: 300\n';
        res.write(`id: g1\n${retry}data: \n\n`);
        res.write(
          `id: g2\ndata: ${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', data: 'before drop' } })}\n\n`,
        );
        log.gets.push({ n: gets, lastEventId, status: 200 });
        setTimeout(() => {
          droppedAt = performance.now();
          res.end();
          if (kase === 'server-down') {
            server.closeAllConnections();
            server.close();
          }
        }, 100);
        return;
      }
      if (kase === 'session-gone') {
        log.gets.push({ n: gets, msAfterDrop: t, lastEventId, status: 404 });
        res.writeHead(404, { 'content-type': 'application/json' });
        res.end(
          JSON.stringify({
            jsonrpc: '2.0',
            id: null,
            error: { code: -32001, message: 'Session not found' },
          }),
        );
        return;
      }
      log.gets.push({ n: gets, msAfterDrop: t, lastEventId, status: 200 });
      res.writeHead(200, { 'content-type': 'text/event-stream', 'mcp-session-id': SESSION });
      res.write(
        `id: g3\ndata: ${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', data: 'after resume' } })}\n\n`,
      );
      return; // keep open
    }
    if (req.method === 'DELETE') {
      res.writeHead(200);
      res.end();
      return;
    }
    let body = '';
    req.on('data', (c) => {
      body += c;
    });
    req.on('end', () => {
      const msg = JSON.parse(body);
      if (msg.id === undefined) {
        res.writeHead(202);
        res.end();
        return;
      }
      if (kase === 'session-gone' && msg.method !== 'initialize' && gets > 1) {
        res.writeHead(404, { 'content-type': 'application/json' });
        res.end(
          JSON.stringify({
            jsonrpc: '2.0',
            id: msg.id,
            error: { code: -32001, message: 'Session not found' },
          }),
        );
        return;
      }
      const result =
        msg.method === 'initialize'
          ? {
              protocolVersion: '2025-11-25',
              capabilities: { logging: {} },
              serverInfo: { name: 'probe', version: '0' },
            }
          : {};
      res.writeHead(200, { 'content-type': 'application/json', 'mcp-session-id': SESSION });
      res.end(JSON.stringify({ jsonrpc: '2.0', id: msg.id, result }));
    });
  });
  return new Promise((resolve) =>
    server.listen(0, HOST, () => resolve({ server, droppedAt: () => droppedAt })),
  );
}

async function probe(kase) {
  const log = { case: kase, gets: [], onerror: [], onclose: [], notifications: [] };
  const { server, droppedAt } = await startServer(kase, log);
  const since = () => (droppedAt() === undefined ? 0 : Math.round(performance.now() - droppedAt()));
  const transport = new StreamableHTTPClientTransport(
    new URL(`http://${HOST}:${server.address().port}/mcp`),
  );
  const client = new Client({ name: 'probe', version: '0' }); // legacy mode: a 2025 session
  client.setNotificationHandler('notifications/message', (n) => {
    log.notifications.push({ msAfterDrop: since(), data: n.params.data });
  });
  client.onerror = (e) =>
    log.onerror.push({ msAfterDrop: since(), class: e.constructor.name, message: e.message });
  client.onclose = () => log.onclose.push({ msAfterDrop: since() });
  await client.connect(transport);
  await new Promise((r) => setTimeout(r, kase === 'no-retry' ? 4000 : 2500));
  try {
    await client.ping({ timeout: 2000 });
    log.laterRequest = 'ok';
  } catch (e) {
    log.laterRequest = `${e.constructor.name} ${e.code ?? ''}: ${e.message}`;
  }
  await client.close().catch(() => {});
  if (server.listening) {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  }
  return log;
}

for (const kase of ['resume', 'session-gone', 'server-down', 'no-retry']) {
  console.log(JSON.stringify(await probe(kase), null, 1));
}
