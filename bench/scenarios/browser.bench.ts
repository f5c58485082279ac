import type { Browser } from 'playwright-core';
import { it } from 'vitest';
import { launchBrowser, type Playground, startPlayground } from '../../test/e2e/harness';
import { type BrowserSize, KINDS, SIZES } from '../lib/config';
import { elapsed } from '../lib/harness';
import { type Cell, ms, over, type Table, type Target, times, writeFragment } from '../lib/report';
import { ratio, round } from '../lib/stats';

/**
 * A list of resources in a real browser: headless Chromium (Debian's), the
 * playground built for production (`--production`: minified React in its
 * production mode, as users get it; its demo MCP server on the same origin), plain
 * HTTP/1.1, so at most 6 connections per host, as in a browser without
 * HTTP/2. The rows mount at once on a connected page; measured in the page:
 * mount → every row shows its content. Ours (McpProvider + useResource)
 * against plain useQuery reading through one SDK client (no subscriptions),
 * each run on a fresh page, in ABBA order. On 2025 servers a third contender,
 * the floor, is plain with each read after its own `resources/subscribe` (what
 * rule 4 asks of a first load, with no library around it). Node's fetch has no
 * per-host connection limit: this is what the jsdom scenarios cannot show.
 */

type Impl = 'ours' | 'plain' | 'floor';
const ERA_OF = { modern: 'modern', 'legacy-v2': 'legacy', 'legacy-v1': 'legacy' } as const;

interface BrowserRun {
  impl: Impl;
  round: number;
  ms: number;
}

async function createNotes(playground: Playground, count: number): Promise<string[]> {
  const uris: string[] = [];
  for (let i = 0; i < count; i++) {
    const response = await fetch(new URL('/demo/notes', playground.url), {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ text: `bench row ${i}` }),
    });
    if (!response.ok) throw new Error(`creating a note: HTTP ${response.status}`);
    uris.push(((await response.json()) as { uri: string }).uri);
  }
  return uris;
}

async function runOnce(
  browser: Browser,
  playground: Playground,
  impl: Impl,
  era: 'modern' | 'legacy',
  uris: string[],
  timeoutMs: number,
): Promise<number> {
  const context = await browser.newContext();
  try {
    const page = await context.newPage();
    const errors: string[] = [];
    page.on('pageerror', (error) => errors.push(error.message));
    await page.goto(new URL(`/bench.html?impl=${impl}&era=${era}`, playground.url).href);
    await page.waitForFunction(() => window.__bench?.ready === true, undefined, {
      timeout: timeoutMs,
    });
    const result = await page.evaluate((list) => window.__bench?.run(list), uris);
    if (!result || errors.length > 0) {
      throw new Error(`browser ${era} ${impl}: ${errors.join('; ') || 'no result'}`);
    }
    return result.ms;
  } finally {
    await context.close();
  }
}

it('browser: a list of resources in Chromium over HTTP/1.1', async () => {
  const start = performance.now();
  const size: BrowserSize = SIZES.browser;
  const [playground, browser] = await Promise.all([startPlayground(), launchBrowser()]);
  const results: Record<string, BrowserRun[]> = {};
  const tables: Table[] = [];
  const targets: Target[] = [];
  try {
    const uris = await createNotes(playground, size.rows);
    const eras = [...new Set(KINDS.map((kind) => ERA_OF[kind]))];
    for (const era of eras) {
      const runs: BrowserRun[] = [];
      // Thrown away: warms the server's and the browser's first requests.
      const impls: Impl[] = era === 'legacy' ? ['ours', 'plain', 'floor'] : ['ours', 'plain'];
      for (const impl of impls) {
        await runOnce(browser, playground, impl, era, uris.slice(0, 5), size.timeoutMs);
      }
      for (let r = 0; r < size.rounds; r++) {
        const order = r % 2 === 0 ? impls : [...impls].reverse();
        for (const impl of order) {
          const value = await runOnce(browser, playground, impl, era, uris, size.timeoutMs);
          runs.push({ impl, round: r, ms: round(value, 1) });
          console.log(`browser ${era} ${impl}#${r}: ${Math.round(value)} ms`);
        }
      }
      results[era] = runs;
      const mean = (impl: Impl) => {
        const values = runs.filter((run) => run.impl === impl).map((run) => run.ms);
        return values.reduce((a, b) => a + b, 0) / values.length;
      };
      const ours = mean('ours');
      const plain = mean('plain');
      const perRound = Array.from({ length: size.rounds }, (_, r) =>
        ratio(
          runs.find((run) => run.impl === 'ours' && run.round === r)?.ms ?? Number.NaN,
          runs.find((run) => run.impl === 'plain' && run.round === r)?.ms,
        ),
      );
      const value = ratio(ours, plain) ?? Number.NaN;
      const floor = impls.includes('floor') ? mean('floor') : undefined;
      const floorNote =
        floor === undefined
          ? ''
          : `; the floor (plain, each read after its own subscribe) ${ratio(floor, plain)}× plain, ours ${ratio(ours, floor)}× the floor`;
      tables.push({
        title: `browser · ${era} · ${size.rows} rows mounted at once, Chromium, HTTP/1.1 (${size.rounds} round(s), ABBA)`,
        head: ['impl', 'all rows shown ms (mean)', 'vs plain', 'per round'],
        rows: impls.map((impl): Cell[] => [
          impl,
          ms(mean(impl)),
          impl === 'plain' ? '' : times(ratio(mean(impl), plain) ?? Number.NaN),
          runs
            .filter((run) => run.impl === impl)
            .map((run) => run.ms)
            .join(' / '),
        ]),
        notes: [
          "Measured in the page: the rows mounted → the last one shows its content (layout effects). The page is the playground's production build (React's production mode).",
        ],
      });
      const limit = era === 'modern' ? 1.15 : 1.5;
      targets.push({
        scenario: 'browser',
        kind: era,
        name: 'time until every row shows vs plain useQuery, Chromium over HTTP/1.1',
        target: `≤ ${limit}×`,
        actual: `${value}× (${Math.round(ours)} ms vs ${Math.round(plain)} ms; rounds ${perRound.join(' / ')}${floorNote})`,
        pass: value <= limit,
        missedBy: over(value, limit),
        why:
          era === 'legacy'
            ? "each first load is a resources/subscribe and, once answered, a read (rule 4): two requests per row where plain makes one, and in Chromium each request costs the page's main thread about the same (the fetch, its SSE answer, the SDK's parsing): the floor measured beside it (plain with each read after its own subscribe) is what rule 4 allows"
            : 'each wave of rows waits for its listen acknowledgement before its reads (rule 4), and each listen stream holds one of the 6 connections',
      });
    }
  } finally {
    await browser.close();
    await playground.stop();
  }

  writeFragment({
    scenario: 'browser',
    durationMs: elapsed(start),
    config: { ...size, kinds: KINDS },
    results,
    tables,
    targets,
    ourMismatches: 0,
  });
});
