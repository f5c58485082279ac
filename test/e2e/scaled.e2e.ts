/**
 * Scaled mode (`npm run playground -- --instances 3 --bus redis|memory`): /mcp is a round-robin
 * proxy over three instances of the demo server, and each change from the page lands on one
 * instance only. With the Redis bus every panel still updates; with an in-memory bus per
 * instance a change handled away from the listen stream's instance is never announced, and the
 * silence probe (on in scaled mode) turns the `silent` check red.
 */
import { mkdir } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BURST_SIZE, URIS } from '../../playground/shared/demo';
import { REDIS_SERVER, SKIP_REASON } from '../scale/redisServer';
import { Dashboard, until } from './dashboard';
import { launchBrowser, type Playground, startPlayground } from './harness';

const SCREENSHOTS = fileURLToPath(new URL('../../playground/screenshots/', import.meta.url));
const INSTANCES = 3;
// The probe runs every 5 s / 2 on resources quiet for 5 s: a silent change shows within ~7.5 s.
const PROBE_FINDS_MS = 20_000;

if (!REDIS_SERVER) console.warn(`scaled e2e, --bus redis: ${SKIP_REASON}`);

let browser: Browser | undefined;

beforeAll(async () => {
  browser = await launchBrowser();
});

afterAll(async () => {
  await browser?.close();
});

/** A playground in scaled mode, and one page on it, for one describe block. */
function scaledPlayground(bus: 'redis' | 'memory') {
  const context: { playground?: Playground; page?: Page; ui?: Dashboard; errors: string[] } = {
    errors: [],
  };
  beforeAll(async () => {
    if (!browser) throw new Error('the browser did not start');
    context.playground = await startPlayground(['--instances', String(INSTANCES), '--bus', bus]);
    const page = await browser.newPage({ viewport: { width: 1440, height: 1000 } });
    page.on('pageerror', (error) => context.errors.push(error.message));
    context.page = page;
    context.ui = new Dashboard(page, context.playground.url);
    await page.goto(context.playground.url);
    await until(
      'the connection to be ready',
      () => context.ui?.status() ?? Promise.resolve(null),
      (s) => s === 'ready',
    );
  });
  afterAll(async () => {
    if (context.page) {
      await mkdir(SCREENSHOTS, { recursive: true });
      await context.page.screenshot({ path: `${SCREENSHOTS}scaled-${bus}.png`, fullPage: true });
      await context.page.close();
    }
    await context.playground?.stop();
  });
  return context;
}

describe.skipIf(!REDIS_SERVER)(
  `scaled playground, 3 instances, Redis bus${REDIS_SERVER ? '' : ` (skipped: ${SKIP_REASON})`}`,
  () => {
    const ctx = scaledPlayground('redis');
    const ui = () => ctx.ui as Dashboard;

    it('says so: a banner naming the Redis bus, one listen stream on one instance', async () => {
      const banner = ui().byId('scale-banner');
      expect(await banner.getAttribute('data-bus')).toBe('redis');
      expect(await banner.getAttribute('data-instances')).toBe(String(INSTANCES));
      expect(await ui().byId('scale-bus').textContent()).toContain('Redis');
      expect(Object.keys(await ui().instanceStreams())).toHaveLength(INSTANCES);
      await ui().streamInstance();
    });

    it('a config edit and a burst land on different instances, and every panel updates', async () => {
      const streamOn = await ui().streamInstance();
      const before = (await ui().latestChange())?.seq ?? 0;

      const token = `scaled-redis-${Date.now()}`;
      const json = JSON.stringify({ theme: 'light', token }, null, 2);
      await ui().byId('config-input').fill(json);
      await ui().byId('config-save').click();
      for (const panel of ['panel-config-raw', 'panel-config-summary']) {
        await until(
          panel,
          () => ui().panelText(panel),
          (t) => t.includes(token),
        );
      }
      await until(
        'the editor',
        () => ui().byId('config-input').inputValue(),
        (v) => v === json,
      );
      const config = await ui().changeHandled('POST /demo/config', before);

      const { counter } = await ui().serverState();
      await until(
        'the counter',
        () => ui().panelText('panel-counter'),
        (t) => t === String(counter),
      );
      const notificationsBefore = await ui().uriCount(URIS.counter, 'notifications');
      await ui().byId('control-burst').click();
      await until(
        'the burst to end on the latest value',
        () => ui().panelText('panel-counter'),
        (t) => t === String(counter + BURST_SIZE),
      );
      const burst = await ui().changeHandled('POST /demo/burst', config.seq);
      // The counters card renders at most every 50 ms: it may show the burst after the panel.
      await until(
        'the burst counted as notifications',
        () => ui().uriCount(URIS.counter, 'notifications'),
        (n) => n > notificationsBefore,
      );

      // The point: two instances, at least one of them not holding the page's stream.
      expect(burst.instance).not.toBe(config.instance);
      expect([config.instance, burst.instance].some((name) => name !== streamOn)).toBe(true);

      // The list (list_changed) and a binary resource, from yet other turns of the rotation.
      const text = `scaled note ${Date.now()}`;
      await ui().byId('note-input').fill(text);
      await ui().byId('note-add').click();
      const item = ui().byId('note-item').filter({ hasText: text });
      await item.waitFor();
      const uri = await item.getAttribute('data-uri');
      await ctx.page?.locator(`[data-testid="resource-row"][data-uri="${uri}"]`).waitFor();
      const image = ui().byId('panel-image').locator('img');
      const src = await image.getAttribute('src');
      await ui().byId('control-recolor').click();
      await until(
        'the recoloured logo',
        () => image.getAttribute('src'),
        (next) => next !== null && next !== src,
      );
      const clock = await ui().panelText('panel-clock');
      await until(
        'the clock (each tick runs on the next instance)',
        () => ui().panelText('panel-clock'),
        (t) => t !== clock,
      );
      // Changes made elsewhere reached the stream's instance through Redis.
      const fromOthers = ui()
        .page.locator(`[data-testid="instance-row"][data-name="${streamOn}"]`)
        .getByTestId('instance-from-others');
      await until(
        'events from other instances on the stream instance',
        async () => Number(await fromOthers.textContent()),
        (n) => n > 0,
      );
    });

    it('nothing was silent, and the page threw nothing', async () => {
      expect(await ui().byId('banner-silent').getAttribute('data-ok')).toBe('true');
      expect(
        await ui().page.locator('[data-testid="check"][data-id="silent"]').getAttribute('data-ok'),
      ).toBe('true');
      expect(await ui().silentChanges(URIS.counter)).toBe(0);
      expect(await ui().silentChanges(URIS.config)).toBe(0);
      expect(ctx.errors).toEqual([]);
    });
  },
);

describe('scaled playground, 3 instances, one in-memory bus per instance (the failure mode)', () => {
  const ctx = scaledPlayground('memory');
  const ui = () => ctx.ui as Dashboard;

  it('says so: a banner naming the in-memory bus', async () => {
    const banner = ui().byId('scale-banner');
    expect(await banner.getAttribute('data-bus')).toBe('memory');
    expect(await ui().byId('scale-bus').textContent()).toContain('in-memory');
    expect(await ui().byId('banner-silent').getAttribute('data-ok')).toBe('true');
  });

  it('a change handled away from the stream is found by the probe: the silent check turns red', async () => {
    const streamOn = await ui().streamInstance();
    // Consecutive changes land on consecutive instances: within two, one misses the stream.
    let last = (await ui().latestChange())?.seq ?? 0;
    let awayFromStream: string | undefined;
    for (let attempt = 0; attempt < INSTANCES && !awayFromStream; attempt += 1) {
      await ui().byId('control-increment').click();
      const change = await ui().changeHandled('POST /demo/counter', last);
      last = change.seq;
      if (change.instance !== streamOn) awayFromStream = change.instance;
    }
    expect(awayFromStream, 'no change landed away from the stream instance').toBeDefined();
    const { counter } = await ui().serverState();

    // The banner and the diagnostics card read one snapshot: read them in one go.
    await until(
      'the silent check to turn red, in the banner and in the diagnostics card',
      () =>
        ui().page.evaluate(() =>
          ['[data-testid="banner-silent"]', '[data-testid="check"][data-id="silent"]'].map(
            (selector) => document.querySelector(selector)?.getAttribute('data-ok'),
          ),
        ),
      (oks) => oks.every((ok) => ok === 'false'),
      PROBE_FINDS_MS,
    );
    expect(await ui().silentChanges(URIS.counter)).toBeGreaterThanOrEqual(1);
    expect(await ui().byId('banner-silent').locator(`[data-uri="${URIS.counter}"]`).count()).toBe(
      1,
    );
    // Still subscribed and acknowledged the whole time: silence, not a broken subscription.
    expect(await ui().diagnosticsCell(URIS.counter, 'acknowledged').textContent()).toBe('yes');
    // The probe's read brought the content the notification never announced.
    await until(
      'the counter, by the probe read',
      () => ui().panelText('panel-counter'),
      (t) => t === String(counter),
    );
    expect(ctx.errors).toEqual([]);
  });
});
