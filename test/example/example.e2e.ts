/**
 * The example app's production build in Chromium, against the playground's MCP endpoints on
 * another origin: proves the installed package works as shipped (no devtools, live data), and
 * that the playground's CORS headers are what a browser needs, on both eras.
 */
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ENDPOINTS, type EndpointId, type NoteCreated } from '../../playground/shared/demo';
import { until } from '../e2e/dashboard';
import { launchBrowser, type Playground, startPlayground } from '../e2e/harness';
import { type StaticSite, serveStatic } from './staticServer';

const DIST = process.env.MCP_EXAMPLE_DIST;

let playground: Playground | undefined;
let site: StaticSite | undefined;
let browser: Browser | undefined;

beforeAll(async () => {
  if (!DIST) throw new Error('MCP_EXAMPLE_DIST is not set: run `npm run check:example`');
  [playground, site, browser] = await Promise.all([
    startPlayground(),
    serveStatic(DIST),
    launchBrowser(),
  ]);
});

afterAll(async () => {
  await browser?.close();
  await site?.close();
  await playground?.stop();
});

async function control<T>(method: string, path: string, body?: unknown): Promise<T> {
  if (!playground) throw new Error('no playground');
  const response = await fetch(new URL(path, playground.url), {
    method,
    headers: { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!response.ok)
    throw new Error(`${method} ${path}: ${response.status} ${await response.text()}`);
  return (await response.json()) as T;
}

const text = (page: Page, testId: string) =>
  page
    .getByTestId(testId)
    .textContent()
    .then((t) => t ?? '');

describe.each(Object.keys(ENDPOINTS) as EndpointId[])('the example app on %s', (endpoint) => {
  let page: Page;
  const pageErrors: string[] = [];

  beforeAll(async () => {
    if (!browser || !site || !playground) throw new Error('setup failed');
    const server = new URL(ENDPOINTS[endpoint].path, playground.url).href;
    // The point of the exercise: the page and the MCP endpoint are on different origins.
    expect(new URL(server).origin).not.toBe(new URL(site.url).origin);
    page = await browser.newPage();
    page.on('pageerror', (error) => pageErrors.push(error.message));
    await page.goto(`${site.url}?server=${encodeURIComponent(server)}`);
  });

  afterAll(async () => {
    await page?.close();
  });

  it('connects cross-origin on the right era and the clock ticks', async () => {
    await until(
      'status ready',
      () => text(page, 'status'),
      (s) => s === 'ready',
    );
    expect(await page.getByTestId('status').getAttribute('data-era')).toBe(endpoint);
    const first = await until(
      'the clock',
      () => text(page, 'clock'),
      (t) => /^\d{4}-/.test(t),
    );
    await until(
      'the clock to tick',
      () => text(page, 'clock'),
      (t) => t !== first,
    );
  });

  it('shows a config change made on the server', async () => {
    const token = `example-${endpoint}-${Date.now()}`;
    await control('POST', '/demo/config', { text: JSON.stringify({ token }) });
    await until(
      'the new config',
      () => text(page, 'config'),
      (t) => t.includes(token),
    );
  });

  it('follows the resource list (list_changed)', async () => {
    const before = Number(await text(page, 'resource-count'));
    const { uri } = await control<NoteCreated>('POST', '/demo/notes', { text: `from ${endpoint}` });
    try {
      await until(
        'the new note in the list',
        () => text(page, 'resources'),
        (t) => t.includes(uri),
      );
      expect(Number(await text(page, 'resource-count'))).toBe(before + 1);
    } finally {
      await control('DELETE', `/demo/notes?uri=${encodeURIComponent(uri)}`);
    }
    await until(
      'the note to go',
      () => text(page, 'resources'),
      (t) => !t.includes(uri),
    );
  });

  it('renders no devtools in production and throws nothing', async () => {
    expect(await page.getByRole('button', { name: /^MCP · / }).count()).toBe(0);
    expect(await page.getByLabel('MCP devtools').count()).toBe(0);
    expect(pageErrors).toEqual([]);
  });
});
