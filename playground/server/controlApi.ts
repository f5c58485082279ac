/**
 * The JSON control API the page's buttons call (`/demo/*`): small, same-origin, and only a
 * remote control for DemoServer. Changes reach the page through MCP, never through these answers.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { BURST_SIZE, isEndpointId, type NoteCreated } from '../shared/demo';
import type { DemoServer, Publisher } from './demoServer';
import { DemoError, readJson, sendJson } from './http';

/**
 * Scaled mode: the instance a control request landed on. Its change is published through its
 * own bus (`via`), never on all instances: that is what a real app server can do.
 */
export interface ControlHandler {
  name: string;
  via: Publisher;
  /** Called once the change was made. */
  handled(what: string): void;
}

type Route = (
  demo: DemoServer,
  req: IncomingMessage,
  query: URLSearchParams,
  via: Publisher,
) => Promise<unknown>;

const DEFAULT_OUTAGE_MS = 2000;

function stringField(body: Record<string, unknown>, name: string): string {
  const value = body[name];
  if (typeof value !== 'string') throw new DemoError(400, `"${name}" must be a string`);
  return value;
}

const routes: Record<string, Route> = {
  'GET /demo/state': async (demo) => demo.state(),
  // Reads of one URI the server has served, over both endpoints (the tab-sharing test).
  'GET /demo/reads': async (demo, _req, query) => ({
    reads: demo.store.reads(query.get('uri') ?? undefined),
  }),
  'POST /demo/config': async (demo, req, _query, via) => {
    demo.setConfig(stringField(await readJson(req), 'text'), via);
    return { ok: true };
  },
  'POST /demo/notes': async (demo, req, _query, via): Promise<NoteCreated> => ({
    uri: demo.addNote(stringField(await readJson(req), 'text'), via),
  }),
  'DELETE /demo/notes': async (demo, _req, query, via) => {
    demo.removeNote(query.get('uri') ?? '', via);
    return { ok: true };
  },
  'POST /demo/counter': async (demo, _req, _query, via) => ({ counter: demo.increment(via) }),
  'POST /demo/burst': async (demo, req, _query, via) => {
    const body = await readJson(req);
    const count = typeof body.count === 'number' ? body.count : BURST_SIZE;
    return { counter: demo.burst(count, via) };
  },
  'POST /demo/break-stream': async (demo, _req, query) => {
    const endpoint = query.get('endpoint');
    if (!isEndpointId(endpoint)) throw new DemoError(400, 'endpoint must be modern or legacy');
    const outage = Number(query.get('outageMs') ?? DEFAULT_OUTAGE_MS);
    demo.breakStream(endpoint, Number.isFinite(outage) ? outage : DEFAULT_OUTAGE_MS);
    return { ok: true };
  },
  'POST /demo/fail-reads': async (demo, req, _query, via) => {
    const body = await readJson(req);
    if (typeof body.fail !== 'boolean') throw new DemoError(400, '"fail" must be a boolean');
    demo.setFailingReads(body.fail, via);
    return { failingReads: body.fail };
  },
  'POST /demo/clock': async (demo, req) => {
    const body = await readJson(req);
    if (typeof body.running !== 'boolean') throw new DemoError(400, '"running" must be a boolean');
    demo.setClock(body.running);
    return { running: body.running };
  },
  'POST /demo/image': async (demo, _req, _query, via) => {
    demo.recolor(via);
    return { ok: true };
  },
};

export async function handleControl(
  demo: DemoServer,
  req: IncomingMessage,
  res: ServerResponse,
  handler?: ControlHandler,
): Promise<void> {
  const url = new URL(req.url ?? '/', 'http://localhost');
  const what = `${req.method ?? 'GET'} ${url.pathname}`;
  const route = routes[what];
  if (!route) {
    sendJson(res, 404, { error: `no route ${req.method} ${url.pathname}` });
    return;
  }
  try {
    const answer = await route(demo, req, url.searchParams, handler?.via ?? demo.modern);
    if (!handler) {
      sendJson(res, 200, answer);
      return;
    }
    handler.handled(what);
    sendJson(res, 200, { ...(answer as object), handledBy: handler.name });
  } catch (error) {
    const status = error instanceof DemoError ? error.status : 500;
    sendJson(res, status, { error: error instanceof Error ? error.message : String(error) });
  }
}
