/**
 * The playground's Servers page (`/servers`, `mcp-react-query/servers`) in Chromium: add the
 * demo server, a second instance of it, the protected one and a broken URL; sign in to the
 * protected one (the one callback page finishes it); every server's tools under qualified
 * names; a question saying which server asks; the list kept across a reload and shared with a
 * second tab; a removal that takes a server's tools with it.
 */
import type { BrowserContext, Page } from 'playwright-core';
import { afterEach, describe, expect, it } from 'vitest';
import { TOOLS } from '../../playground/shared/demo';
import { until } from './dashboard';
import { startedForFile } from './harness';

const started = startedForFile();

let context: BrowserContext | undefined;
afterEach(async () => {
  await context?.close();
  context = undefined;
});

interface Row {
  id: string;
  status: string;
  signIn: string;
}

class ServersPage {
  readonly errors: string[] = [];

  constructor(readonly page: Page) {
    page.on('pageerror', (error) => this.errors.push(error.message));
  }

  static async open(browserContext: BrowserContext): Promise<ServersPage> {
    const ui = new ServersPage(await browserContext.newPage());
    await ui.page.goto(new URL('/servers', started().playground.url).href);
    await ui.page.getByTestId('servers-card').waitFor();
    return ui;
  }

  byId(testId: string) {
    return this.page.getByTestId(testId);
  }

  rows(): Promise<Row[]> {
    return this.page.evaluate(() =>
      [...document.querySelectorAll<HTMLElement>('[data-testid^="server-"][data-status]')].map(
        (row) => ({
          id: row.dataset.testid?.slice('server-'.length) ?? '',
          status: row.dataset.status ?? '',
          signIn: row.dataset.signIn ?? '',
        }),
      ),
    );
  }

  tools(): Promise<string[]> {
    return this.page.evaluate(() =>
      [...document.querySelectorAll('[data-testid="tool-qualified-name"]')].map(
        (cell) => cell.textContent ?? '',
      ),
    );
  }

  async waitForRows(what: string, accept: (rows: Record<string, Row>) => boolean) {
    return until(
      what,
      async () => Object.fromEntries((await this.rows()).map((row) => [row.id, row])),
      accept,
    );
  }

  waitForTools(what: string, accept: (tools: string[]) => boolean) {
    return until(what, () => this.tools(), accept);
  }
}

/** The demo's tools as the server lists them (no_such_tool is the one it does not have). */
const LISTED = [TOOLS.rename, TOOLS.counterApp, TOOLS.failing, TOOLS.slow];
const DEMO_TOOLS = LISTED.map((tool) => `Demo__${tool}`);
const SECOND_TOOLS = LISTED.map((tool) => `Second_instance__${tool}`);

describe('the Servers page', () => {
  it('four servers added, one signed in, every tool under a qualified name; kept across a reload', async () => {
    context = await started().browser.newContext({ viewport: { width: 1280, height: 900 } });
    const ui = await ServersPage.open(context);
    for (const preset of ['demo', 'second', 'protected', 'broken']) {
      await ui.byId(`preset-${preset}`).click();
    }
    await ui.waitForRows(
      'demo and second ready, protected unauthorized, broken failed',
      (rows) =>
        rows.demo?.status === 'ready' &&
        rows['second-instance']?.status === 'ready' &&
        rows.protected?.status === 'unauthorized' &&
        rows.protected.signIn === 'signed-out' &&
        rows.broken?.status === 'error',
    );
    expect(await ui.byId('server-broken').getByTestId('server-row-error').textContent()).toContain(
      '404',
    );
    await ui.waitForTools(
      'both demo instances listed',
      (tools) => tools.length === DEMO_TOOLS.length + SECOND_TOOLS.length,
    );
    expect(await ui.tools()).toEqual([...DEMO_TOOLS, ...SECOND_TOOLS]);

    // A duplicate is refused where the user typed it.
    await ui.byId('server-name').fill('Again');
    await ui.byId('server-url').fill(new URL('/mcp', started().playground.url).href);
    await ui.byId('server-add').click();
    expect(await ui.byId('server-answer').getAttribute('data-ok')).toBe('false');
    expect(await ui.byId('server-answer').textContent()).toMatch(/^duplicate-url: .*"Demo"/);

    // Sign in to the protected one: the page leaves for the authorization server and comes
    // back through the one callback page of every server.
    const app = new URL(started().playground.url).origin;
    await ui.byId('server-protected').getByTestId('server-row-authorize').click();
    await ui.page.waitForURL((url) => url.origin !== app && url.pathname === '/authorize');
    await ui.byId('as-alice').click();
    await ui.page.waitForURL((url) => url.origin === app && url.pathname === '/servers');
    await ui.waitForRows(
      'protected signed in',
      (rows) => rows.protected?.status === 'ready' && rows.protected.signIn === 'signed-in',
    );
    await ui.waitForTools(
      'the protected server’s tool too',
      (tools) => tools.length === DEMO_TOOLS.length + SECOND_TOOLS.length + 1,
    );
    expect(await ui.tools()).toEqual([...DEMO_TOOLS, ...SECOND_TOOLS, 'Protected__archive_inbox']);

    // A question says which server asks.
    await ui.byId('call-Second_instance__rename_board').click();
    await until(
      'the question',
      () => ui.byId('server-question-from').count(),
      (n) => n === 1,
    );
    expect(await ui.byId('server-question-from').textContent()).toBe('Second instance');
    await ui.byId('elicitation-decline').click();
    await until(
      'the call to finish',
      () => ui.byId('all-tools-call').getAttribute('data-state'),
      (state) => state === 'success',
    );

    // A reload: the list is restored, the signed-in server connects with its token.
    await ui.page.reload();
    await ui.waitForRows(
      'every server back',
      (rows) =>
        rows.demo?.status === 'ready' &&
        rows['second-instance']?.status === 'ready' &&
        rows.protected?.status === 'ready' &&
        rows.broken?.status === 'error',
    );

    // Removing a server takes its tools with it and leaves the others alone.
    await ui.byId('server-second-instance').getByTestId('server-row-remove').click();
    await ui.waitForTools(
      'the second instance’s tools gone',
      (tools) => tools.length === DEMO_TOOLS.length + 1,
    );
    expect(await ui.tools()).toEqual([...DEMO_TOOLS, 'Protected__archive_inbox']);
    expect((await ui.rows()).map((row) => row.id)).toEqual(['demo', 'protected', 'broken']);
    expect(ui.errors).toEqual([]);
  });

  it('a second tab follows an add and a removal', async () => {
    context = await started().browser.newContext({ viewport: { width: 1280, height: 900 } });
    const [first, second] = [await ServersPage.open(context), await ServersPage.open(context)];
    await first.byId('preset-demo').click();
    await first.byId('preset-legacy').click();
    await second.waitForRows(
      'both in the second tab',
      (rows) => rows.demo?.status === 'ready' && rows['demo-2025']?.status === 'ready',
    );
    await second.byId('server-demo').getByTestId('server-row-remove').click();
    await first.waitForRows(
      'the removal in the first tab',
      (rows) => rows.demo === undefined && rows['demo-2025']?.status === 'ready',
    );
    expect([...first.errors, ...second.errors]).toEqual([]);
  });
});
