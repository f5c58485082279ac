/**
 * The sign-in demo (`/signin`) in Chromium, end to end: the protected endpoints answer 401, the
 * page says `unauthorized`, a click leaves for the demo authorization server (or opens it in a
 * popup), the person picks who signs in, the browser comes back to `/callback/<endpoint>`, and
 * the connection resumes with that user's private inbox. Signing out drops it; the next user
 * sees only their own, which a MutationObserver in every document of the run checks: alice's
 * inbox is never on screen once she signed out, not even for one frame.
 */
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, describe, expect, it } from 'vitest';
import {
  callbackPath,
  ENDPOINT_IDS,
  type EndpointId,
  type SignInMode,
} from '../../playground/shared/demo';
import { until } from './dashboard';
import { startedForFile } from './harness';

/** In alice's inbox only (playground/server/protectedDemo.ts). */
const ALICE_MARKER = "Alice's inbox";
const BOB_MARKER = "Bob's inbox";

const started = startedForFile();

/** One look at the app's page, reported by the observer whenever what it shows changes. */
interface Seen {
  path: string;
  status: string | null;
  user: string | null;
  alice: boolean;
  bob: boolean;
}

/**
 * Runs in every document the context loads (the app's pages, the callback, the popup, the
 * authorization server's page): on every DOM mutation, report what the sign-in card shows and
 * whether either inbox is anywhere on the page, when that changed.
 */
function observe(markers: { alice: string; bob: string }) {
  const report = (window as unknown as { __e2eSeen?: (seen: unknown) => void }).__e2eSeen;
  if (!report) return;
  let last = '';
  const look = () => {
    const text = document.body?.textContent ?? '';
    const seen = {
      path: location.pathname,
      status: document.querySelector('[data-testid="signin-status"]')?.textContent ?? null,
      user: document.querySelector('[data-testid="signin-user"]')?.textContent ?? null,
      alice: text.includes(markers.alice),
      bob: text.includes(markers.bob),
    };
    const key = JSON.stringify(seen);
    if (key === last) return;
    last = key;
    report(seen);
  };
  new MutationObserver(look).observe(document, {
    subtree: true,
    childList: true,
    characterData: true,
  });
}

class SignInPage {
  readonly seen: Seen[] = [];
  readonly errors: string[] = [];
  page!: Page;

  constructor(
    readonly context: BrowserContext,
    readonly endpoint: EndpointId,
    readonly mode: SignInMode,
  ) {}

  async open(): Promise<void> {
    await this.context.exposeFunction('__e2eSeen', (seen: Seen) => {
      if (seen.path.startsWith('/signin') || seen.path.startsWith('/callback')) {
        this.seen.push(seen);
      }
    });
    await this.context.addInitScript(observe, { alice: ALICE_MARKER, bob: BOB_MARKER });
    this.page = await this.context.newPage();
    this.page.on('pageerror', (error) => this.errors.push(error.message));
    await this.page.goto(
      new URL(`/signin?endpoint=${this.endpoint}&mode=${this.mode}`, started().playground.url).href,
    );
  }

  byId(testId: string) {
    return this.page.getByTestId(testId);
  }

  card(): Promise<{ status: string | null; user: string | null; inbox: string }> {
    return this.page.evaluate(() => ({
      status: document.querySelector('[data-testid="signin-status"]')?.textContent ?? null,
      user: document.querySelector('[data-testid="signin-user"]')?.textContent ?? null,
      inbox:
        document.querySelector('[data-testid="panel-private"] [data-testid="content"]')
          ?.textContent ?? '',
    }));
  }

  async waitFor(what: string, accept: (card: Awaited<ReturnType<SignInPage['card']>>) => boolean) {
    return until(what, () => this.card(), accept);
  }

  /** Click "Sign in…", pick `user` on the authorization server's page, come back. */
  async signIn(user: 'alice' | 'bob'): Promise<void> {
    const app = new URL(started().playground.url).origin;
    if (this.mode === 'popup') {
      const [popup] = await Promise.all([
        this.context.waitForEvent('page'),
        this.byId('signin-button').click(),
      ]);
      await popup.getByTestId(`as-${user}`).click();
      // The popup's callback hands the URL to this page and closes itself.
      await popup.waitForEvent('close');
    } else {
      await this.byId('signin-button').click();
      // The authorization server is another origin (its own port): the page really left.
      await this.page.waitForURL((url) => url.origin !== app && url.pathname === '/authorize');
      await this.byId(`as-${user}`).click();
      await this.page.waitForURL(
        (url) => url.origin === app && url.pathname === '/signin' && !url.search.includes('code='),
      );
    }
    await this.waitFor(
      `${user} to be signed in`,
      (card) =>
        card.status === 'ready' &&
        card.user === user &&
        card.inbox.startsWith(user === 'alice' ? ALICE_MARKER : BOB_MARKER),
    );
  }
}

/**
 * Two frames in the app's page that post whatever the page sends them to the page, as an
 * embedded MCP App view or an ad could: one of another origin (a sandboxed frame, origin
 * `null`) and one of the app's own origin (not the popup).
 */
async function addForgingFrames(page: Page): Promise<void> {
  await page.evaluate(async () => {
    const relay = '<script>onmessage = (e) => parent.postMessage(e.data, "*")</script>';
    const loaded = ['allow-scripts', undefined].map((sandbox) => {
      const frame = document.createElement('iframe');
      frame.dataset.forger = sandbox ? 'other-origin' : 'same-origin';
      if (sandbox) frame.setAttribute('sandbox', sandbox);
      frame.srcdoc = relay;
      frame.style.display = 'none';
      const done = new Promise((resolve) => frame.addEventListener('load', resolve));
      document.body.append(frame);
      return done;
    });
    await Promise.all(loaded);
  });
}

/**
 * Each forging frame, and the page itself, posts a callback that aborts the sign-in with text
 * of the forger's choosing, carrying the real `state`. Resolves once the page has heard all
 * three (after the sign-in's own listener, which was added first).
 */
async function forgeCallbacks(page: Page, forged: string): Promise<void> {
  await page.evaluate(async (url) => {
    const message = { type: 'mcp-react-query:oauth-callback', url };
    let heard = 0;
    const all = new Promise<void>((resolve) => {
      addEventListener('message', function count(event) {
        if ((event.data as { url?: unknown } | null)?.url !== url) return;
        heard += 1;
        if (heard < 3) return;
        removeEventListener('message', count);
        resolve();
      });
    });
    for (const frame of document.querySelectorAll<HTMLIFrameElement>('iframe[data-forger]')) {
      frame.contentWindow?.postMessage(message, '*');
    }
    postMessage(message, '*');
    await all;
  }, forged);
}

describe.each(ENDPOINT_IDS)('the sign-in popup on the %s endpoint', (endpoint) => {
  let context: BrowserContext | undefined;

  afterAll(async () => {
    await context?.close();
  });

  it('a callback forged by another frame (of another origin or this one) changes nothing; the popup still signs in', async () => {
    context = await started().browser.newContext({ viewport: { width: 1280, height: 800 } });
    const ui = new SignInPage(context, endpoint, 'popup');
    await ui.open();
    await ui.waitFor('unauthorized', (card) => card.status === 'unauthorized');
    await addForgingFrames(ui.page);

    const [popup] = await Promise.all([
      context.waitForEvent('page'),
      ui.byId('signin-button').click(),
    ]);
    await popup.waitForURL((url) => url.pathname === '/authorize');
    const state = new URL(popup.url()).searchParams.get('state');
    expect(state).toBeTruthy();
    const forged = new URL(callbackPath(endpoint), started().playground.url);
    forged.search = new URLSearchParams({
      state: state as string,
      error: 'access_denied',
      error_description: 'forged by a frame',
    }).toString();
    await forgeCallbacks(ui.page, forged.href);

    // Nothing happened: no error shown, and the popup's own answer is still awaited.
    expect((await ui.card()).status).toBe('unauthorized');
    expect(await ui.page.getByText('forged by a frame').count()).toBe(0);
    await popup.getByTestId('as-alice').click();
    await popup.waitForEvent('close');
    await ui.waitFor(
      'alice to be signed in',
      (card) => card.status === 'ready' && card.user === 'alice',
    );
    expect(await ui.page.getByText('forged by a frame').count()).toBe(0);
    expect(ui.errors).toEqual([]);
  });
});

const CASES = ENDPOINT_IDS.flatMap((endpoint) =>
  (['redirect', 'popup'] as const).map((mode) => ({ endpoint, mode })),
);

describe.each(CASES)('sign-in on the $endpoint endpoint, $mode mode', ({ endpoint, mode }) => {
  let context: BrowserContext | undefined;

  afterAll(async () => {
    await context?.close();
  });

  it("unauthorized → alice → sign out → bob; alice's inbox never shows again", async () => {
    // A context of its own: empty localStorage, so nobody is signed in yet.
    context = await started().browser.newContext({ viewport: { width: 1280, height: 800 } });
    const ui = new SignInPage(context, endpoint, mode);
    await ui.open();
    await ui.page.evaluate(() => {
      (window as { e2eMarker?: boolean }).e2eMarker = true;
    });

    const first = await ui.waitFor('unauthorized', (card) => card.status === 'unauthorized');
    expect(first.user).toBe('nobody');
    expect(await ui.byId('signin-error').textContent()).toContain('/mcp-protected');

    await ui.signIn('alice');

    await ui.byId('signout-button').click();
    await ui.waitFor(
      'signed out',
      (card) => card.status === 'unauthorized' && card.user === 'nobody' && card.inbox === '',
    );

    await ui.signIn('bob');

    // The observer saw alice's inbox while she was signed in, and nothing of it from the
    // moment the card said nobody is signed in, over every document of the run (redirect
    // mode: the authorization page and two more loads of the app).
    const shown = ui.seen.findIndex((seen) => seen.alice);
    expect(shown).toBeGreaterThanOrEqual(0);
    expect(ui.seen[shown]).toMatchObject({ user: 'alice' });
    const signedOut = ui.seen.findIndex((seen, i) => i > shown && seen.user === 'nobody');
    expect(signedOut).toBeGreaterThan(shown);
    const after = ui.seen.slice(signedOut);
    expect(after.filter((seen) => seen.alice)).toEqual([]);
    expect(after.at(-1)).toMatchObject({ user: 'bob', status: 'ready', bob: true });
    if (mode === 'popup') {
      // Signed in twice without leaving the page.
      expect(await ui.page.evaluate(() => (window as { e2eMarker?: boolean }).e2eMarker)).toBe(
        true,
      );
    } else {
      expect(new URL(ui.page.url()).search).toBe(`?endpoint=${endpoint}&mode=redirect`);
    }
    expect(ui.errors).toEqual([]);
  });
});
