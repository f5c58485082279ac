/**
 * The demo's own MCP App view (`ui://demo/counter.html`, shown by the `show_counter` tool): the
 * counter, live. It speaks the protocol by hand, as the spec allows (no SDK, ~2 kB): `ui/initialize`,
 * then `resources/subscribe` and `resources/read` of `counter://demo`, and on each
 * `notifications/resources/updated` one more read, which the host serves from its cache. It never
 * polls: when the host says nothing, it asks nothing.
 */
import { URIS } from '../shared/demo';

export function counterAppHtml(): string {
  return `<!doctype html>
<html>
<head>
<meta charset="utf-8">
<meta name="color-scheme" content="light dark">
<title>Live counter</title>
<style>
  :root { color-scheme: light dark; }
  body { margin: 0; padding: 12px 14px; font: 14px/1.4 system-ui, sans-serif; }
  body[data-theme="dark"] { color: #e6e6e6; }
  body[data-theme="light"] { color: #1c1c1c; }
  .value { font-size: 40px; font-weight: 700; font-variant-numeric: tabular-nums; }
  .muted { opacity: 0.7; font-size: 12px; }
  code { font-size: 12px; }
</style>
</head>
<body>
<div class="muted">An MCP App view of <code>${URIS.counter}</code>, subscribed through the host</div>
<div class="value" id="value">…</div>
<div class="muted" id="status">connecting…</div>
<div class="muted" id="call"></div>
<script>
(() => {
  const URI = ${JSON.stringify(URIS.counter)};
  const $ = (id) => document.getElementById(id);
  let nextId = 1;
  let reads = 0;
  let updates = 0;
  const pending = new Map();
  const post = (message) => window.parent.postMessage(message, '*');
  const request = (method, params) =>
    new Promise((resolve, reject) => {
      const id = nextId++;
      pending.set(id, { resolve, reject });
      post({ jsonrpc: '2.0', id, method, params });
    });
  const notify = (method, params) => post({ jsonrpc: '2.0', method, params });
  const answer = (id, result) => post({ jsonrpc: '2.0', id, result });
  // The content's own height: the document's is at least the frame's, so it could never shrink.
  const resize = () =>
    notify('ui/notifications/size-changed', {
      height: Math.ceil(document.body.getBoundingClientRect().height),
    });
  const theme = (context) => {
    if (context && context.theme) document.body.dataset.theme = context.theme;
  };
  const status = () => {
    $('status').textContent = 'live: subscribed, ' + reads + ' read' + (reads === 1 ? '' : 's') +
      ' from the host, ' + updates + ' update' + (updates === 1 ? '' : 's') + ', no polling';
    document.body.dataset.reads = String(reads);
  };
  const show = async () => {
    const result = await request('resources/read', { uri: URI });
    const content = result.contents && result.contents[0];
    $('value').textContent = content && 'text' in content ? content.text : '?';
    reads += 1;
    status();
  };
  window.addEventListener('message', (event) => {
    const message = event.data;
    if (event.source !== window.parent || !message || message.jsonrpc !== '2.0') return;
    if (!('method' in message)) {
      const waiting = pending.get(message.id);
      if (!waiting) return;
      pending.delete(message.id);
      if (message.error) waiting.reject(new Error(message.error.message));
      else waiting.resolve(message.result);
      return;
    }
    const params = message.params || {};
    switch (message.method) {
      case 'notifications/resources/updated':
        if (params.uri === URI) {
          updates += 1;
          show().catch((error) => ($('status').textContent = 'read failed: ' + error.message));
        }
        break;
      case 'ui/notifications/tool-input':
        $('call').textContent = 'called with ' + JSON.stringify(params.arguments || {});
        break;
      case 'ui/notifications/tool-result':
        $('call').textContent += ' → ' + ((params.content && params.content[0] && params.content[0].text) || 'done');
        resize();
        break;
      case 'ui/notifications/tool-cancelled':
        $('call').textContent += ' → cancelled: ' + params.reason;
        break;
      case 'ui/notifications/host-context-changed':
        theme(params);
        break;
      case 'ui/resource-teardown':
      case 'ping':
        answer(message.id, {});
        break;
    }
  });
  (async () => {
    const init = await request('ui/initialize', {
      protocolVersion: '2026-01-26',
      appInfo: { name: 'demo-counter', version: '1.0.0' },
      appCapabilities: {},
    });
    theme(init.hostContext);
    notify('ui/notifications/initialized', {});
    await request('resources/subscribe', { uri: URI });
    await show();
    resize();
  })().catch((error) => {
    $('status').textContent = 'error: ' + error.message;
  });
})();
</script>
</body>
</html>
`;
}
