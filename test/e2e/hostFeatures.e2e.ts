/**
 * The playground's issue-21 cards in Chromium, on both endpoints: the slow tool's progress bar
 * and Cancel (the call ends `cancelled`, the server stops it), a prompt form whose fields
 * suggest values as you type and shows the prompt, the template form reading the resource it
 * names, the server log, and the keep-alive's round trip in the header.
 */
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ENDPOINT_IDS } from '../../playground/shared/demo';
import { Dashboard, until } from './dashboard';
import { startedForFile } from './harness';

const started = startedForFile();

describe.each(ENDPOINT_IDS)('host features on the %s endpoint', (endpoint) => {
  let page: Page;
  let ui: Dashboard;
  const pageErrors: string[] = [];

  beforeAll(async () => {
    const { browser, playground } = started();
    page = await browser.newPage({ viewport: { width: 1440, height: 1000 } });
    page.on('pageerror', (error) => pageErrors.push(error.message));
    ui = new Dashboard(page, playground.url);
    await page.goto(`${playground.url}?endpoint=${endpoint}&tabs=own`);
    await until(
      'the connection to be ready',
      () => ui.status(),
      (s) => s === 'ready',
    );
  });

  afterAll(async () => {
    await page?.close();
    expect(pageErrors).toEqual([]);
  });

  it('the slow tool shows its progress, and Cancel ends it as cancelled', async () => {
    await ui.byId('slow-start').click();
    await until(
      'the progress bar to move',
      async () => Number(await ui.byId('slow-progress').getAttribute('value')),
      (value) => value >= 1,
    );
    await ui.byId('slow-cancel').click();
    expect(await ui.byId('slow-tool').getAttribute('data-state')).toBe('cancelled');
    expect(await ui.byId('slow-state').textContent()).toBe('cancelled');
  });

  it('a prompt argument suggests values as you type, and the prompt comes back', async () => {
    const field = ui.byId('complete-tone').locator('input');
    await field.fill('f');
    await until(
      'suggestions for "f"',
      () => ui.byId('suggestions-tone').textContent(),
      (text) => text === 'formal · friendly',
    );
    await ui.byId('complete-note').locator('input').fill('2');
    await field.fill('friendly');
    await ui.byId('prompt-get').click();
    await until(
      'the prompt',
      () => ui.byId('prompt-result').textContent(),
      (text) => text === 'user: Summarize note://2 in a friendly tone.',
    );
  });

  it('the template form completes its variable and reads the resource it names', async () => {
    await ui.byId('templates-card').locator('input').fill('');
    await until(
      'the note numbers',
      () => ui.byId('suggestions-id').textContent(),
      (text) => text === '1 · 2 · 3 · 4 · 5',
    );
    await ui.byId('templates-card').locator('input').fill('1');
    await ui.byId('template-read').click();
    await until(
      'note://1',
      () => ui.byId('template-resource').textContent(),
      (text) => text?.includes('Welcome!') === true,
    );
  });

  it('once the connection is idle, the keep-alive pings and its round trip shows', async () => {
    // The demo clock talks every second: stopped, the connection hears nothing.
    await ui.byId('clock-toggle').click();
    try {
      await until(
        'a ping',
        () => ui.byId('health-rtt').textContent(),
        (text) => /^\d+ ms$/.test(text ?? ''),
        20_000,
      );
      expect(await ui.byId('health').textContent()).toMatch(/^ping \d+ ms$/);
    } finally {
      await ui.byId('clock-toggle').click();
    }
  });
});
