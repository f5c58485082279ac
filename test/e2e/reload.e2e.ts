/**
 * A warm reload in Chromium (`?persist=1`: the playground keeps its cache in localStorage with
 * TanStack's PersistQueryClientProvider and the package's createShouldPersistQuery). The page
 * closes, the counter changes while nobody watches, the page opens again with the MCP endpoint
 * held back: the stored counter shows before the connection exists; once the endpoint answers,
 * the counter is read once and the change made meanwhile shows.
 */
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { ENDPOINT_IDS, ENDPOINTS, URIS } from '../../playground/shared/demo';
import { Dashboard, DemoServer, until } from './dashboard';
import { startedForFile } from './harness';

const started = startedForFile();
/** Beyond the listen channel's quiet merge (10 s with the default lingerMs). */
const SETTLE_TIMEOUT_MS = 25_000;

const demo = () => new DemoServer(started().playground.url);

/** What the page stored: the counter's text, or undefined while it is not stored. */
function storedCounter(page: Page): Promise<string | undefined> {
  return page.evaluate((uri) => {
    for (let i = 0; i < localStorage.length; i += 1) {
      const key = localStorage.key(i);
      if (!key?.startsWith('mcp-playground:')) continue;
      const stored = JSON.parse(localStorage.getItem(key) ?? '{}');
      for (const query of stored.clientState?.queries ?? []) {
        if (!JSON.stringify(query.queryKey).includes(JSON.stringify(uri))) continue;
        return query.state?.data?.contents?.[0]?.text as string | undefined;
      }
    }
    return undefined;
  }, URIS.counter);
}

describe.each(ENDPOINT_IDS)('%s endpoint: a warm reload', (endpoint) => {
  it('shows the stored counter before connecting, then reads it once and shows what changed meanwhile', async () => {
    const { playground, browser } = started();
    const context = await browser.newContext();
    const pageErrors: string[] = [];
    try {
      const url = new URL(playground.url);
      url.searchParams.set('endpoint', endpoint);
      url.searchParams.set('persist', '1');

      const first = await context.newPage();
      first.on('pageerror', (error) => pageErrors.push(error.message));
      await first.goto(url.href);
      const before = new Dashboard(first, playground.url);
      await until(
        'the first page to be ready',
        () => before.status(),
        (s) => s === 'ready',
      );
      const counter = await demo().increment();
      await until(
        'the first page to show the counter',
        () => before.panelText('panel-counter'),
        (text) => text.trim() === String(counter),
      );
      await until(
        'the counter to reach localStorage',
        () => storedCounter(first),
        (text) => text?.trim() === String(counter),
      );
      expect(await first.getByTestId('persist').isChecked()).toBe(true);
      await first.close();

      // While no page is open.
      const meanwhile = await demo().increment();
      const readsBefore = await demo().counterReads();

      // The reloaded page may not reach the server until the stored content has shown.
      const second = await context.newPage();
      second.on('pageerror', (error) => pageErrors.push(error.message));
      let open: () => void = () => {};
      const gate = new Promise<void>((resolve) => {
        open = resolve;
      });
      const mcpPath = ENDPOINTS[endpoint].path;
      await second.route(
        (target) => target.pathname === mcpPath,
        async (route) => {
          await gate;
          await route.continue().catch(() => {});
        },
      );
      await second.goto(url.href);
      const after = new Dashboard(second, playground.url);
      await until(
        'the stored counter to show before the connection exists',
        async () => ({
          text: (await after.panelText('panel-counter')).trim(),
          status: await after.status(),
        }),
        (seen) => seen.text === String(counter),
      );
      expect(await after.status()).not.toBe('ready');
      expect(await demo().counterReads()).toBe(readsBefore);

      open();
      await until(
        'the change made meanwhile to show',
        () => after.panelText('panel-counter'),
        (text) => text.trim() === String(meanwhile),
      );
      await until(
        'the page to be ready',
        () => after.status(),
        (s) => s === 'ready',
      );
      await after.panelIdle('panel-counter');
      // Restored content is stale: read once, when the subscription is acknowledged.
      expect(await demo().counterReads()).toBe(readsBefore + 1);
      // One stream in the end. On the way there may be two for a moment: the closed page's,
      // until the server sees its socket go, or one the page opened for a panel that mounted
      // after the first stream was asked for, until the quiet merge (10 × lingerMs).
      await until(
        'the server to hold exactly one listen stream',
        () => demo().endpoint(endpoint),
        (view) => view.openStreams === 1,
        SETTLE_TIMEOUT_MS,
      );
      expect(pageErrors).toEqual([]);
    } finally {
      await context.close();
    }
  });
});
