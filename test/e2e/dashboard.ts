/**
 * Reading the playground page the way a person does, by its data-testids. Every wait is
 * `eventually` (test/support/wait.ts) on a condition, or Playwright's own; nothing here sleeps.
 */
import type { Locator, Page } from 'playwright-core';
import { type DemoState, type EndpointId, URIS } from '../../playground/shared/demo';
import { eventually } from '../support/wait';

const DEFAULT_TIMEOUT_MS = 15_000;
const POLL_MS = 50;

/**
 * `eventually` for a probe of the page (or the demo server) and a condition on what it returns;
 * a timeout names `what` and the last value seen, so a failure explains itself.
 */
export async function until<T>(
  what: string,
  probe: () => Promise<T>,
  accept: (value: T) => boolean,
  timeoutMs = DEFAULT_TIMEOUT_MS,
): Promise<T> {
  // Boxed: a probe may rightly return `false`, which `eventually` takes for "not yet".
  const { seen } = await eventually(
    async () => {
      const value = await probe();
      if (!accept(value)) {
        throw new Error(
          `timed out after ${timeoutMs} ms waiting for ${what}; last seen: ${JSON.stringify(value)}`,
        );
      }
      return { seen: value };
    },
    { timeout: timeoutMs, interval: POLL_MS },
  );
  return seen;
}

/** The demo server's control API at `baseUrl`, called directly. */
export async function control<T = unknown>(
  baseUrl: string,
  method: 'GET' | 'POST',
  path: string,
  body?: unknown,
): Promise<T> {
  const response = await fetch(new URL(path, baseUrl), {
    method,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!response.ok) throw new Error(`${method} ${path}: HTTP ${response.status}`);
  return (await response.json()) as T;
}

/** The demo server behind the playground, driven and inspected through its control API. */
export class DemoServer {
  constructor(readonly baseUrl: string) {}

  call<T>(method: 'GET' | 'POST', path: string): Promise<T> {
    return control<T>(this.baseUrl, method, path);
  }

  state(): Promise<DemoState> {
    return this.call<DemoState>('GET', '/demo/state');
  }

  async endpoint(endpoint: EndpointId): Promise<DemoState['endpoints'][EndpointId]> {
    return (await this.state()).endpoints[endpoint];
  }

  /** Reads of the counter the server has served (both endpoints). */
  async counterReads(): Promise<number> {
    const path = `/demo/reads?uri=${encodeURIComponent(URIS.counter)}`;
    return (await this.call<{ reads: number }>('GET', path)).reads;
  }

  /** +1 on the counter; resolves with the new value. */
  async increment(): Promise<number> {
    return (await this.call<{ counter: number }>('POST', '/demo/counter')).counter;
  }
}

export class Dashboard {
  constructor(
    readonly page: Page,
    readonly baseUrl: string,
  ) {}

  byId(testId: string): Locator {
    return this.page.getByTestId(testId);
  }

  /**
   * Clicks the button `testId` once it is enabled, as an event on the button itself. The
   * dashboard's layout still moves while its cards load, and a click at the button's coordinates
   * can land beside it on a loaded machine (seen: a tool button's click hit another element, so
   * no call started and the test waited for a view that never came).
   */
  async press(testId: string): Promise<void> {
    const button = this.byId(testId);
    await until(
      `${testId} to be enabled`,
      () => button.isEnabled(),
      (enabled) => enabled,
    );
    await button.dispatchEvent('click');
  }

  async panelText(panel: string): Promise<string> {
    return (await this.byId(panel).getByTestId('content').textContent()) ?? '';
  }

  async panelError(panel: string): Promise<string | undefined> {
    const error = this.byId(panel).getByTestId('error');
    return (await error.count()) === 0 ? undefined : ((await error.textContent()) ?? '');
  }

  async panelIdle(panel: string): Promise<void> {
    await until(
      `${panel} to finish reading`,
      () => this.byId(panel).getAttribute('data-fetching'),
      (value) => value === 'false',
    );
  }

  status(): Promise<string | null> {
    return this.byId('status-badge').getAttribute('data-status');
  }

  streamState(): Promise<string | null> {
    return this.byId('stream').getAttribute('data-state');
  }

  /** A per-URI count from the "reads vs notifications" card; 0 before the URI shows up. */
  async uriCount(uri: string, column: 'reads' | 'notifications' | 'read-errors'): Promise<number> {
    const cell = this.page.locator(
      `[data-testid="uri-counters"][data-uri="${uri}"] [data-testid="${column}"]`,
    );
    return (await cell.count()) === 0 ? 0 : Number(await cell.textContent());
  }

  async number(testId: string): Promise<number> {
    return Number(await this.byId(testId).textContent());
  }

  diagnosticsCell(
    uri: string,
    cell: 'refs' | 'acknowledged' | 'last-error' | 'silent-changes',
  ): Locator {
    return this.page.locator(`[data-testid="diag-row"][data-uri="${uri}"] [data-testid="${cell}"]`);
  }

  async logHas(type: string, text: string): Promise<boolean> {
    return (
      (await this.page
        .locator(`[data-testid="log-entry"][data-type="${type}"]`)
        .filter({ hasText: text })
        .count()) > 0
    );
  }

  // ── scaled mode ──────────────────────────────────────────────────────────

  /** Per instance (deployment card): open listen streams. */
  async instanceStreams(): Promise<Record<string, number>> {
    const rows = await this.byId('instance-row').all();
    const entries = await Promise.all(
      rows.map(async (row) => [
        (await row.getAttribute('data-name')) ?? '?',
        Number(await row.getAttribute('data-streams')),
      ]),
    );
    return Object.fromEntries(entries);
  }

  /** The one instance holding this page's listen stream, once there is exactly one stream. */
  async streamInstance(): Promise<string> {
    const streams = await until(
      'exactly one listen stream, on one instance',
      () => this.instanceStreams(),
      (byName) => Object.values(byName).reduce((a, b) => a + b, 0) === 1,
    );
    return Object.entries(streams).find(([, n]) => n === 1)?.[0] ?? '?';
  }

  /** The newest entry of "latest changes and the instance that handled each". */
  async latestChange(): Promise<{ seq: number; instance: string; what: string } | undefined> {
    const item = this.byId('recent-change').first();
    if ((await item.count()) === 0) return undefined;
    return {
      seq: Number(await item.getAttribute('data-seq')),
      instance: (await item.getAttribute('data-instance')) ?? '',
      what: (await item.getAttribute('data-what')) ?? '',
    };
  }

  /** Waits for the deployment card to list a change newer than `afterSeq`, of route `what`. */
  changeHandled(what: string, afterSeq: number) {
    return until(
      `the deployment card to show who handled ${what}`,
      () => this.latestChange(),
      (change) => change !== undefined && change.seq > afterSeq && change.what === what,
    ) as Promise<{ seq: number; instance: string; what: string }>;
  }

  async silentChanges(uri: string): Promise<number> {
    const cell = this.diagnosticsCell(uri, 'silent-changes');
    return (await cell.count()) === 0 ? 0 : Number(await cell.textContent());
  }

  /** The demo server's control API, called directly (the page's buttons call the same). */
  control<T = unknown>(method: 'GET' | 'POST', path: string, body?: unknown): Promise<T> {
    return control<T>(this.baseUrl, method, path, body);
  }

  serverState(): Promise<DemoState> {
    return this.control<DemoState>('GET', '/demo/state');
  }
}
