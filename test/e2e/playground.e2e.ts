import { mkdir } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  BOARD_COLORS,
  type Board,
  BURST_SIZE,
  ENDPOINT_IDS,
  URIS,
} from '../../playground/shared/demo';
import { Dashboard, until } from './dashboard';
import { startedForFile } from './harness';

const SCREENSHOTS = fileURLToPath(new URL('../../playground/screenshots/', import.meta.url));

// The README's `npm run playground` as it is: the dev server (the other suites run the built page).
const started = startedForFile([], { dev: true });

/** The board as the Tools card shows it. */
async function currentBoard(ui: Dashboard): Promise<Board> {
  await ui.byId('board-title').waitFor();
  const title = (await ui.byId('board-title').textContent()) ?? '';
  const style = (await ui.byId('board-style').textContent()) ?? '';
  const [color = '', columns = '', notify = ''] = style.split(' · ');
  return {
    title,
    color,
    columns: Number.parseInt(columns, 10),
    notify: notify === 'team notified',
  };
}

/** What the elicitation form's inputs hold now. */
async function formValues(ui: Dashboard): Promise<Board> {
  const form = ui.byId('elicitation');
  return {
    title: await form.getByTestId('field-title').inputValue(),
    color: await form.getByTestId('field-color').inputValue(),
    columns: Number(await form.getByTestId('field-columns').inputValue()),
    notify: await form.getByTestId('field-notify').isChecked(),
  };
}

describe.each(ENDPOINT_IDS)('the playground on the %s endpoint', (endpoint) => {
  let page: Page;
  let ui: Dashboard;
  const pageErrors: string[] = [];

  beforeAll(async () => {
    const { browser, playground } = started();
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
    // allTextContents never waits: the row may leave between two looks.
    await until(
      'the note to be released',
      async () => (await ui.diagnosticsCell(uri ?? '', 'acknowledged').allTextContents())[0],
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

  it('a tool asks through a form built from its schema; accepting renames the live board', async () => {
    const board = await currentBoard(ui);
    const notificationsBefore = await ui.uriCount(URIS.board, 'notifications');
    await ui.byId('tool-rename').click();
    const form = ui.byId('elicitation');
    await form.waitFor();
    expect(await form.getByTestId('elicitation-message').textContent()).toContain(
      'Rename the board',
    );
    // One input per schema property, each starting at its default: the board as it is now
    // (the other era's run may have renamed it already: the store is shared).
    expect(await formValues(ui)).toEqual(board);
    // An optional enum: its values, and a way to leave it out.
    expect(await form.getByTestId('field-color').locator('option').allTextContents()).toEqual([
      '—',
      ...BOARD_COLORS,
    ]);

    const next: Board = {
      title: `Board from the ${endpoint} run ${Date.now()}`,
      color: board.color === 'green' ? 'orange' : 'green',
      columns: board.columns === 5 ? 6 : 5,
      notify: !board.notify,
    };
    await form.getByTestId('field-title').fill(next.title);
    await form.getByTestId('field-color').selectOption(next.color);
    await form.getByTestId('field-columns').fill(String(next.columns));
    await form.getByTestId('field-notify').setChecked(next.notify);
    await form.getByTestId('elicitation-accept').click();

    const result = await until(
      'the tool result',
      () => ui.byId('tool-result').allTextContents(),
      (texts) => texts.length === 1 && texts[0]?.includes(next.title) === true,
    );
    expect(result[0]).toContain(`answered accept ${JSON.stringify(next)}`);
    expect(await ui.byId('tool-result').getAttribute('data-is-error')).toBe('false');
    expect(await ui.byId('tool-call').getAttribute('data-state')).toBe('success');
    expect(await ui.byId('tool-progress').textContent()).toContain('3 / 3');
    await form.waitFor({ state: 'detached' });
    // The board follows through its change notification, like every live resource.
    await until(
      'the board to show the new title',
      () => currentBoard(ui),
      (shown) => JSON.stringify(shown) === JSON.stringify(next),
    );
    await until(
      'the counters card to count that notification',
      () => ui.uriCount(URIS.board, 'notifications'),
      (n) => n > notificationsBefore,
    );

    // The next question starts from the board as it is now; declining changes nothing.
    await ui.byId('tool-rename').click();
    await form.waitFor();
    expect(await formValues(ui)).toEqual(next);
    await form.getByTestId('elicitation-decline').click();
    await until(
      'the declined result',
      () => ui.byId('tool-result').allTextContents(),
      (texts) => texts[0]?.includes('answered decline') === true,
    );
    await form.waitFor({ state: 'detached' });
    expect(await currentBoard(ui)).toEqual(next);
  });

  it('a tool reporting a failure is data (isError); a call that fails is an error', async () => {
    await ui.byId('tool-failing').click();
    await until(
      'the isError result',
      () => page.locator('[data-testid="tool-result"][data-is-error="true"]').allTextContents(),
      (texts) => texts[0]?.includes('failed check_links') === true,
    );
    expect(await ui.byId('tool-error').count()).toBe(0);

    await ui.byId('tool-missing').click();
    const error = await until(
      'the call error',
      () => ui.byId('tool-error').allTextContents(),
      (texts) => texts.length === 1,
    );
    expect(error[0]).toContain('no_such_tool');
    expect(await ui.byId('tool-result').count()).toBe(0);
    expect(await ui.byId('tool-call').getAttribute('data-state')).toBe('error');
  });

  it('never reloaded and threw nothing', async () => {
    expect(await page.evaluate(() => (window as { e2eMarker?: boolean }).e2eMarker)).toBe(true);
    expect(pageErrors).toEqual([]);
  });
});
