import { mkdir } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BURST_SIZE, ENDPOINT_IDS, URIS } from '../../playground/shared/demo';
import { Dashboard, until } from './dashboard';
import { launchBrowser, type Playground, startPlayground } from './harness';

const SCREENSHOTS = fileURLToPath(new URL('../../playground/screenshots/', import.meta.url));

let playground: Playground | undefined;
let browser: Browser | undefined;

beforeAll(async () => {
  [playground, browser] = await Promise.all([startPlayground(), launchBrowser()]);
});

afterAll(async () => {
  await browser?.close();
  await playground?.stop();
});

describe.each(ENDPOINT_IDS)('the playground on the %s endpoint', (endpoint) => {
  let page: Page;
  let ui: Dashboard;
  const pageErrors: string[] = [];

  beforeAll(async () => {
    if (!browser || !playground) throw new Error('the playground did not start');
    page = await browser.newPage({ viewport: { width: 1440, height: 1000 } });
    page.on('pageerror', (error) => pageErrors.push(error.message));
    ui = new Dashboard(page, playground.url);
    await page.goto(playground.url);
    // The switch is part of what is tested: the legacy run gets there by clicking it.
    if (endpoint === 'legacy') await ui.byId('endpoint-legacy').click();
    await until(
      'the connection to be ready',
      () => ui.status(),
      (s) => s === 'ready',
    );
    // Proves later that nothing below needed a page load.
    await page.evaluate(() => {
      (window as { e2eMarker?: boolean }).e2eMarker = true;
    });
  });

  afterAll(async () => {
    if (!page) return;
    await mkdir(SCREENSHOTS, { recursive: true });
    await page.screenshot({ path: `${SCREENSHOTS}${endpoint}.png`, fullPage: true });
    await page.close();
  });

  it('connects on the right era and the clock keeps ticking', async () => {
    expect(await ui.byId('status-badge').getAttribute('data-era')).toBe(endpoint);
    expect(new URL(page.url()).searchParams.get('endpoint') ?? 'modern').toBe(endpoint);
    const first = await until(
      'the clock',
      () => ui.panelText('panel-clock'),
      (t) => t !== '',
    );
    await until(
      'the clock to tick',
      () => ui.panelText('panel-clock'),
      (t) => t !== first,
    );
    await until(
      'the four checks to pass',
      () => page.locator('[data-testid="check"][data-ok="false"]').count(),
      (failing) => failing === 0,
    );
  });

  it('editing the config updates every panel showing it, with one subscription', async () => {
    const token = `e2e-${endpoint}-${Date.now()}`;
    const json = JSON.stringify({ theme: 'light', token }, null, 2);
    await ui.byId('config-input').fill(json);
    await ui.byId('config-save').click();
    await until(
      'the raw panel',
      () => ui.panelText('panel-config-raw'),
      (t) => t.includes(token),
    );
    await until(
      'the summary panel',
      () => ui.panelText('panel-config-summary'),
      (t) => t.includes(token),
    );
    await until(
      'the editor',
      () => ui.byId('config-input').inputValue(),
      (v) => v === json,
    );
    // Three components, one ref-counted subscription, acknowledged by the server.
    expect(await ui.diagnosticsCell(URIS.config, 'refs').textContent()).toBe('3');
    expect(await ui.diagnosticsCell(URIS.config, 'acknowledged').textContent()).toBe('yes');
  });

  it('a burst of 100 updates ends on the latest value and costs at most 2 reads', async () => {
    const { counter } = await ui.serverState();
    await until(
      'the counter',
      () => ui.panelText('panel-counter'),
      (t) => t === String(counter),
    );
    await ui.panelIdle('panel-counter');
    const readsBefore = await ui.uriCount(URIS.counter, 'reads');
    const notificationsBefore = await ui.uriCount(URIS.counter, 'notifications');

    await ui.byId('control-burst').click();

    const expected = String(counter + BURST_SIZE);
    await until(
      'the last value',
      () => ui.panelText('panel-counter'),
      (t) => t === expected,
    );
    await until(
      'every notification',
      () => ui.uriCount(URIS.counter, 'notifications'),
      (n) => n === notificationsBefore + BURST_SIZE,
    );
    await ui.panelIdle('panel-counter');
    const reads = (await ui.uriCount(URIS.counter, 'reads')) - readsBefore;
    expect(reads).toBeGreaterThanOrEqual(1);
    expect(reads).toBeLessThanOrEqual(2);
  });

  it('an added note appears in the resource list, and leaves it when removed', async () => {
    const text = `note from the ${endpoint} e2e run ${Date.now()}`;
    await ui.byId('note-input').fill(text);
    await ui.byId('note-add').click();
    const item = ui.byId('note-item').filter({ hasText: text });
    await item.waitFor();
    const uri = await item.getAttribute('data-uri');
    expect(uri).toMatch(/^note:\/\//);
    const row = page.locator(`[data-testid="resource-row"][data-uri="${uri}"]`);
    await row.waitFor();

    await item.getByTestId('note-remove').click();
    await row.waitFor({ state: 'detached' });
    await item.waitFor({ state: 'detached' });
    // The subscription is released after a linger; wait for it so the next test does not
    // break the stream while the narrower one is being opened.
    await until(
      'the note to be released',
      async () =>
        (await ui.diagnosticsCell(uri ?? '', 'acknowledged').count()) === 0
          ? 'gone'
          : await ui.diagnosticsCell(uri ?? '', 'acknowledged').textContent(),
      (state) => state !== 'yes',
    );
  });

  it('a broken stream shows reconnecting, recovers, and shows what changed meanwhile', async () => {
    const { counter } = await ui.serverState();
    await until(
      'the counter',
      () => ui.panelText('panel-counter'),
      (t) => t === String(counter),
    );
    const notificationsBefore = await ui.uriCount(URIS.counter, 'notifications');
    const reopensBefore = await ui.number('stream-reopens');

    await ui.byId('control-outage').selectOption('2000');
    await ui.byId('control-break-stream').click();
    await until(
      'reconnecting',
      async () => [await ui.status(), await ui.streamState()],
      ([status, stream]) => status === 'reconnecting' || stream === 'reopening',
    );
    // A change the server cannot announce: nobody is listening while it refuses requests.
    const changed = await ui.control<{ counter: number }>('POST', '/demo/counter');
    const shownDuringOutage = await ui.panelText('panel-counter');
    const stillDown = (await ui.serverState()).outageUntil[endpoint] !== undefined;
    expect(stillDown, 'the outage ended before the test could look (machine too slow?)').toBe(true);
    expect(shownDuringOutage).toBe(String(counter));

    await until(
      'ready again',
      () => ui.status(),
      (s) => s === 'ready',
      20_000,
    );
    await until(
      'the stream to reopen',
      () => ui.streamState(),
      (s) => s === 'open',
    );
    await until(
      'the change made during the outage',
      () => ui.panelText('panel-counter'),
      (t) => t === String(changed.counter),
    );
    // It came by the re-read after recovery: the notification for it was never delivered.
    expect(await ui.uriCount(URIS.counter, 'notifications')).toBe(notificationsBefore);
    expect(await ui.number('stream-reopens')).toBeGreaterThan(reopensBefore);
    expect(
      (await ui.logHas('status', 'reconnecting')) || (await ui.logHas('stream', 'reopening')),
    ).toBe(true);
  });

  it('a failing read keeps the old content and shows the error', async () => {
    await until(
      'the report',
      () => ui.panelText('panel-flaky'),
      (t) => t.startsWith('Report'),
    );
    await ui.panelIdle('panel-flaky');
    const before = await ui.panelText('panel-flaky');

    await ui.byId('control-fail-reads').click();
    const error = await until(
      'the read error',
      () => ui.panelError('panel-flaky'),
      (e) => e !== undefined,
    );
    expect(error).toContain('Simulated outage');
    expect(await ui.panelText('panel-flaky')).toBe(before);
    await until(
      'the error in the diagnostics',
      async () => (await ui.diagnosticsCell(URIS.flaky, 'last-error').textContent()) ?? '',
      (text) => text.includes('Simulated outage'),
    );

    await ui.byId('control-fail-reads').click();
    await until(
      'the new report',
      () => ui.panelText('panel-flaky'),
      (t) => t.startsWith('Report') && t !== before,
    );
    await until(
      'the error to clear',
      () => ui.panelError('panel-flaky'),
      (e) => e === undefined,
    );
  });

  it('renders resource text as text and the binary resource as an image', async () => {
    const html = ui.byId('note-item').filter({ hasText: '<b>Not bold.</b>' });
    await html.waitFor();
    expect(await html.locator('b, img').count()).toBe(0);
    const image = ui.byId('panel-image').locator('img');
    await image.waitFor();
    await until(
      'the PNG to decode',
      () => image.evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth),
      (width) => width !== false && width > 0,
    );
  });

  it('never reloaded and threw nothing', async () => {
    expect(await page.evaluate(() => (window as { e2eMarker?: boolean }).e2eMarker)).toBe(true);
    expect(pageErrors).toEqual([]);
  });
});
