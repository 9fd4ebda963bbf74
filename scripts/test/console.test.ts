// The committee console as a person uses it, in real headless Chromium (Debian's chromium driven by
// playwright-core): the page shows five live nodes, kills one with its own button, sees its tile
// turn down and the timeline record the kill while orders still fill, starts it again and sees it
// come back. Screenshots go to .test-results/console-*.png.
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { existsSync, mkdirSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { httpLinkControl, startConsole, type ConsoleServer } from '@tenebra/console';
import { ROOT } from '../src/cluster';
import { createAccount, startTestCluster, Trader, waitFor, type TestCluster } from './harness';

const CHROMIUM = '/usr/bin/chromium';
const SHOTS = join(ROOT, '.test-results');
const ORDER = { symbol: 'ETH-USDC-PERP', type: 'limit', quantity: 0.05, price: 3000 };

describe.skipIf(!existsSync(CHROMIUM))('committee console in a browser', () => {
  let tc: TestCluster;
  let con: ConsoleServer;
  let browser: Browser;
  let page: Page;
  let seller: Trader;
  let buyer: Trader;
  const token = 'c0ffee'.repeat(8);
  let trading = true;
  let loop: Promise<void> = Promise.resolve();

  /** One crossing pair: a resting sell, then an IOC buy at its price; the buy's id. */
  const pair = async (): Promise<string | null> => {
    const s = await seller.place({ ...ORDER, side: 'sell', time_in_force: 'GTC' });
    const b = await buyer.place({ ...ORDER, side: 'buy', time_in_force: 'IOC' });
    return s.status === 200 && b.status === 200 ? b.body.data!.order_id : null;
  };
  const filled = (id: string) => waitFor(async () => (await buyer.order(id)).status === 'FILLED', 90_000, `order ${id} to fill`);
  const tileState = (role: string, index: number) => page.getAttribute(`.tile[data-role="${role}"][data-index="${index}"]`, 'data-state');
  /** waits until the page shows exactly `count` elements matching `sel` (text: containing it) */
  const shows = (sel: string, count: number, timeoutMs: number, text?: string) =>
    waitFor(async () => (await page.locator(sel, text === undefined ? {} : { hasText: text }).count()) === count, timeoutMs, `${count} x ${sel}${text ? ` with '${text}'` : ''} on the page`)
      .catch(async (e: unknown) => {
        // what the page says instead (e.g. which node did not apply a link setting, and why)
        const said = text === undefined ? [] : await page.locator(sel).allTextContents().catch(() => []);
        throw said.length > 0 ? new Error(`${(e as Error).message}; the page shows ${JSON.stringify(said.slice(0, 5))}`) : e;
      });
  const shot = (name: string) => page.screenshot({ path: join(SHOTS, `console-${name}.png`), fullPage: true });

  beforeAll(async () => {
    mkdirSync(SHOTS, { recursive: true });
    tc = await startTestCluster({ supervise: true }); // as npm start: a node that finds itself stale exits and is started again
    con = await startConsole({ target: tc.cluster, n: 5, port: 0, token, links: httpLinkControl(() => tc.cluster.linkControlUrls(), tc.cluster.operatorToken) });
    const [a, b] = await Promise.all([createAccount(tc.dataDir), createAccount(tc.dataDir)]);
    seller = new Trader(tc.baseUrl, a!);
    buyer = new Trader(tc.baseUrl, b!);
    await Promise.all([seller.login(), buyer.login()]);
    // orders keep flowing in the background for the plots (a pair about every half second)
    loop = (async () => {
      while (trading) {
        await pair().catch(() => null);
        await new Promise((r) => setTimeout(r, 400));
      }
    })();
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    });
    page = await browser.newPage({ viewport: { width: 1500, height: 1100 } });
    page.on('dialog', (d) => void d.dismiss()); // a refused action alerts: the assertions then fail on state
  }, 400_000);

  afterAll(async () => {
    trading = false;
    await loop;
    await browser?.close();
    await con?.close(); // closing twice is harmless
    await tc?.cleanup();
  });

  it('refuses requests without the operator token (401, the error envelope)', async () => {
    for (const path of ['', 'api/state', `?token=${'0'.repeat(48)}`]) {
      const r = await fetch(`${con.url}${path}`, { redirect: 'manual' });
      expect(r.status, path).toBe(401);
      expect(await r.json()).toMatchObject({ code: 40103, error: 'invalid_token' });
    }
    // a page of another site that rebinds its name to 127.0.0.1 (fetch cannot set Host: node:http can)
    const wrongHost = await new Promise<number>((resolve, reject) => {
      request(`${con.url}api/state`, { headers: { authorization: `Bearer ${token}`, host: 'evil.example' } }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      }).on('error', reject).end();
    });
    expect(wrongHost).toBe(403);
    expect((await fetch(`${con.url}api/state`, { headers: { authorization: `Bearer ${token}` } })).status).toBe(200);
    const bad = await fetch(`${con.url}api/control`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify({ action: 'explode', role: 'committee', index: 1 }) });
    expect(bad.status).toBe(400);
    expect(await bad.json()).toMatchObject({ code: 40000, error: 'invalid_request' });
  });

  it('shows five live nodes, kills one from its tile, records it while orders fill, and brings it back', async () => {
    await page.goto(`${con.url}?token=${token}`);
    expect(page.url()).toBe(con.url); // the token left the address for a cookie
    await shows('.tile[data-role="committee"][data-state="up"]', 5, 60_000);
    await shows('#leakage tbody tr[data-label="cross"]', 1, 60_000);
    await shows('.tile[data-role="committee"][data-index="1"] tr[data-up="true"]', 4, 30_000);
    await shot('live');

    // freeze (SIGSTOP) node 5 and thaw it (SIGCONT): the tile says so, the launcher's child is stopped meanwhile
    await page.click('.tile[data-role="committee"][data-index="5"] button[data-action="freeze"]');
    await shows('.tile[data-role="committee"][data-index="5"][data-state="frozen"]', 1, 10_000);
    expect(tc.cluster.isFrozen('committee', 5)).toBe(true);
    await shows('#timeline li.src-console', 1, 10_000, 'node 5: freeze (console)');
    await page.click('.tile[data-role="committee"][data-index="5"] button[data-action="thaw"]');
    await shows('.tile[data-role="committee"][data-index="5"][data-state="frozen"]', 0, 10_000);
    expect(tc.cluster.isFrozen('committee', 5)).toBe(false);
    await shows('.tile[data-role="committee"][data-state="up"]', 5, 60_000);

    await page.click('.tile[data-role="committee"][data-index="4"] button[data-action="kill"]');
    await shows('.tile[data-role="committee"][data-index="4"][data-state="down"]', 1, 10_000);
    await shows('#timeline li.src-console', 1, 10_000, 'node 4: kill -9 (console)');
    expect(tc.cluster.isRunning('committee', 4)).toBe(false);
    // trading goes on with four nodes
    const id = await waitFor(pair, 30_000, 'a crossing pair acknowledged with node 4 down');
    await filled(id);
    await shows('.tile[data-role="committee"][data-index="1"] tr[data-peer="4"][data-up="false"]', 1, 30_000);
    await shot('node-down');

    await page.click('.tile[data-role="committee"][data-index="4"] button[data-action="restart"]');
    // back: a fresh process recovers its shares from the others first (the tile says 'recovering'
    // until the node's ready gauge says it has them and follows the sequencer)
    await shows('.tile[data-role="committee"][data-index="4"][data-state="up"]', 1, 240_000).catch(async (e: unknown) => {
      await shot('node-not-back');
      throw e;
    });
    expect(await tileState('committee', 4)).toBe('up');
    await shows('#timeline li.src-console', 1, 10_000, 'node 4: restart (console)');
    // 'up' is in quorum with the others (a node without quorum beside nodes that have one is 'recovering')
    expect(await page.locator('.tile[data-role="committee"][data-index="4"] tr[data-up="true"]').count()).toBeGreaterThanOrEqual(2);
    await filled(await waitFor(pair, 30_000, 'a crossing pair acknowledged after the restart'));
    await shot('node-back');

    // emulated WAN links on the running committee, from the page's form, then back to loopback
    await page.fill('#links-form input[name="latency_ms"]', '20');
    await page.fill('#links-form input[name="jitter_ms"]', '2');
    await page.click('#links-form button[type="submit"]');
    await shows('#links-result', 1, 20_000, 'applied at every node');
    await shows('.tile[data-role="committee"] dd', 5, 10_000, '20 ms ± 2');
    await shows('#timeline li.src-console', 1, 10_000, 'links: set links: latency 20 ms, jitter 2 ms');
    await filled(await waitFor(pair, 30_000, 'a crossing pair acknowledged over 20 ms links'));
    await shot('links');
    await page.fill('#links-form input[name="latency_ms"]', '0');
    await page.fill('#links-form input[name="jitter_ms"]', '0');
    await page.click('#links-form button[type="submit"]');
    await shows('.tile[data-role="committee"] dd', 5, 20_000, '0 ms ± 0');
  }, 480_000);
});
