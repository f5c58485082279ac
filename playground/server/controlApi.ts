/**
 * The JSON control API the page's buttons call (`/demo/*`): small, same-origin, and only a
 * remote control for DemoServer. Changes reach the page through MCP, never through these answers.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { BURST_SIZE, isEndpointId, type NoteCreated } from '../shared/demo';
import type { DemoServer } from './demoServer';
import { DemoError, readJson, sendJson } from './http';

type Route = (demo: DemoServer, req: IncomingMessage, query: URLSearchParams) => Promise<unknown>;

const DEFAULT_OUTAGE_MS = 2000;

function stringField(body: Record<string, unknown>, name: string): string {
  const value = body[name];
  if (typeof value !== 'string') throw new DemoError(400, `"${name}" must be a string`);
  return value;
}

const routes: Record<string, Route> = {
  'GET /demo/state': async (demo) => demo.state(),
  'POST /demo/config': async (demo, req) => {
    demo.setConfig(stringField(await readJson(req), 'text'));
    return { ok: true };
  },
  'POST /demo/notes': async (demo, req): Promise<NoteCreated> => ({
    uri: demo.addNote(stringField(await readJson(req), 'text')),
  }),
  'DELETE /demo/notes': async (demo, _req, query) => {
    demo.removeNote(query.get('uri') ?? '');
    return { ok: true };
  },
  'POST /demo/counter': async (demo) => ({ counter: demo.increment() }),
  'POST /demo/burst': async (demo, req) => {
    const body = await readJson(req);
    const count = typeof body.count === 'number' ? body.count : BURST_SIZE;
    return { counter: demo.burst(count) };
  },
  'POST /demo/break-stream': async (demo, _req, query) => {
    const endpoint = query.get('endpoint');
    if (!isEndpointId(endpoint)) throw new DemoError(400, 'endpoint must be modern or legacy');
    const outage = Number(query.get('outageMs') ?? DEFAULT_OUTAGE_MS);
    demo.breakStream(endpoint, Number.isFinite(outage) ? outage : DEFAULT_OUTAGE_MS);
    return { ok: true };
  },
  'POST /demo/fail-reads': async (demo, req) => {
    const body = await readJson(req);
    if (typeof body.fail !== 'boolean') throw new DemoError(400, '"fail" must be a boolean');
    demo.setFailingReads(body.fail);
    return { failingReads: body.fail };
  },
  'POST /demo/image': async (demo) => {
    demo.recolor();
    return { ok: true };
  },
};

export async function handleControl(
  demo: DemoServer,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  const url = new URL(req.url ?? '/', 'http://localhost');
  const route = routes[`${req.method ?? 'GET'} ${url.pathname}`];
  if (!route) {
    sendJson(res, 404, { error: `no route ${req.method} ${url.pathname}` });
    return;
  }
  try {
    sendJson(res, 200, await route(demo, req, url.searchParams));
  } catch (error) {
    const status = error instanceof DemoError ? error.status : 500;
    sendJson(res, status, { error: error instanceof Error ? error.message : String(error) });
  }
}
