// The fuzzing campaign (issue 25, part 3): one in-process gateway (fake sequencer, no committee, so
// nothing changes an account behind the fuzzer's back), a stranger's account with a valid token, a
// bystander account nobody fuzzes with, and a seeded mix of REST, WebSocket (anonymous, logged in,
// encrypted) and internal-link inputs. Unhandled rejections and uncaught exceptions are violations.
import fc from 'fast-check';
import { ManualClock } from '../src/clock';
import { ADMIN_SECRET_HEADER } from '../src/http/routes-admin';
import { startRig, newAccount, call, type Rig, type Account } from '../test/harness';
import { restInput, runRestInput, type RestTarget } from './rest';
import { wsFrame, fuzzPreLogin, fuzzLoggedIn, fuzzEncrypted, tamper, LoggedIn } from './ws';
import { linkFrame, fuzzLink, type LinkTarget } from './links';
import { Tally, type Violation } from './verdict';

export interface CampaignOptions {
  inputs: number;
  seed: number;
  /** called every few seconds with the tally so far */
  progress?: (t: Tally, elapsedMs: number) => void;
  progressEveryMs?: number;
  /** stop after this many minutes even if fewer inputs ran (the report says how many did) */
  maxMinutes?: number;
  /** called with each violation as it happens */
  onViolation?: (v: Violation) => void;
}

export interface CampaignResult {
  tally: Tally;
  seconds: number;
  seed: number;
}

/** Shares of the inputs per surface (sum 1). */
// Encrypted inputs cost ten REST inputs each (a session setup per input), so they get a smaller share.
const MIX = { rest: 0.6, wsAnonymous: 0.25, wsLogin: 0.08, wsEncrypted: 0.03, link: 0.04 } as const;
const BATCH = 200;

export async function runCampaign(o: CampaignOptions): Promise<CampaignResult> {
  const tally = new Tally();
  tally.onViolation = o.onViolation ?? null;
  const onRejection = (e: unknown) => tally.fail('process', `unhandled rejection: ${String(e instanceof Error ? e.stack : e)}`, '');
  const onException = (e: Error) => tally.fail('process', `uncaught exception: ${e.stack ?? e.message}`, '');
  process.on('unhandledRejection', onRejection);
  process.on('uncaughtException', onException);
  const clock = new ManualClock(Date.now());
  const rig = await startRig({
    clock, connectNodes: [], cancelTimeoutMs: 20, ackTimeoutMs: 2_000,
    publicLimits: { perMinute: 1_000_000, perSecond: 1_000_000, burst: 1_000_000 },
    repeg: { enabled: false }, risk: { intervalMs: 0 },
  });
  const t0 = Date.now();
  let lastProgress = t0;
  try {
    const stranger = await newAccount(rig, 'Apex', '1000000');
    const bystander = await newAccount(rig, 'Core', '5000');
    let token = stranger.token;
    let tokenAtMs = clock.nowMs();
    const fp = (a: Account) => fingerprint(rig, a.user_id);
    const bystanderBefore = await fp(bystander);
    const target: RestTarget = { gw: rig.gw, userId: stranger.user_id, token: () => token, fingerprint: () => fp(stranger) };
    const routes = rig.gw.app.routeTable;
    const wsUrl = rig.gw.urls.wsUrl;
    const plain = new LoggedIn(wsUrl, () => token, false);
    const sealed = new LoggedIn(wsUrl, () => token, true);
    const eth = rig.gw.app ? await symbolId(rig, 'ETH-USDC-PERP') : 0;
    const links: LinkTarget[] = [{
      name: 'results', url: rig.gw.urls.internalUrl,
      state: () => { rig.gw.ws.health.refresh(); return `${rig.gw.resultsCursor}|${rig.gw.ws.health.current.live_nodes}`; },
    }];

    const quota = {
      rest: Math.round(o.inputs * MIX.rest), wsAnonymous: Math.round(o.inputs * MIX.wsAnonymous), wsLogin: Math.round(o.inputs * MIX.wsLogin),
      wsEncrypted: Math.round(o.inputs * MIX.wsEncrypted), link: 0,
    };
    quota.link = Math.max(0, o.inputs - quota.rest - quota.wsAnonymous - quota.wsLogin - quota.wsEncrypted);
    const done = { rest: 0, wsAnonymous: 0, wsLogin: 0, wsEncrypted: 0, link: 0 };
    let batchNo = 0;
    const sample = <T>(arb: fc.Arbitrary<T>, n: number): T[] => fc.sample(arb, { numRuns: n, seed: o.seed + 7919 * batchNo++ });
    const tick = () => {
      const now = Date.now();
      if (o.progress && now - lastProgress >= (o.progressEveryMs ?? 3_000)) {
        lastProgress = now;
        o.progress(tally, now - t0);
      }
    };
    // Virtual time moves 50 ms per REST input (spacing and minute budgets refill as for a paced
    // client); the stranger logs in again well before the token's 900 s.
    const renew = async () => {
      if (clock.nowMs() - tokenAtMs < 600_000) return;
      const r = await call(rig.gw, 'POST', '/api/v1/auth/token', { grant_type: 'client_credentials', client_id: stranger.api_key, client_secret: stranger.api_secret, passphrase: stranger.passphrase });
      token = r.body.access_token as string;
      tokenAtMs = clock.nowMs();
      await plain.close();
      await sealed.close();
    };
    const order = { symbol: 'ETH-USDC-PERP', side: 'buy', type: 'limit', quantity: '0.01', price: '1000', time_in_force: 'GTC' };

    const deadline = o.maxMinutes !== undefined ? t0 + o.maxMinutes * 60_000 : Infinity;
    while (Object.keys(quota).some((k) => done[k as keyof typeof done] < quota[k as keyof typeof quota]) && Date.now() < deadline) {
      const n = (k: keyof typeof quota) => Math.min(BATCH, quota[k] - done[k]);
      let t1 = Date.now();
      const lap = (surface: string) => {
        const now = Date.now();
        tally.timed(surface, now - t1);
        t1 = now;
      };
      for (const input of sample(restInput(routes, () => token), n('rest'))) {
        await runRestInput(target, input, tally);
        clock.advance(50);
        await renew();
        done.rest++;
        tick();
      }
      lap('rest');
      const anon = sample(wsFrame, n('wsAnonymous'));
      await fuzzPreLogin(wsUrl, anon, tally);
      done.wsAnonymous += anon.length;
      tick();
      lap('ws-anonymous');
      for (const f of sample(wsFrame, n('wsLogin'))) {
        await fuzzLoggedIn(plain, f, tally, () => fp(stranger));
        done.wsLogin++;
        tick();
      }
      lap('ws-login');
      for (const t of sample(tamper, n('wsEncrypted'))) {
        await fuzzEncrypted(sealed, t, eth, order, tally, () => fp(stranger));
        done.wsEncrypted++;
        tick();
      }
      lap('ws-encrypted');
      for (const fs of sample(fc.array(linkFrame, { minLength: 1, maxLength: 3 }), n('link'))) {
        await fuzzLink(links[0]!, fs, tally);
        done.link++;
        tick();
      }
      lap('link-results');
    }
    await plain.close();
    await sealed.close();
    if ((await fp(bystander)) !== bystanderBefore) tally.fail('process', 'the bystander account changed', '');
    // the gateway still serves after the campaign
    const health = await rig.gw.app.inject({ method: 'GET', url: '/api/v1/system/health' });
    if (health.statusCode !== 200) tally.fail('process', `GET /system/health answered ${health.statusCode} after the campaign`, '');
  } finally {
    await rig.close();
    process.off('unhandledRejection', onRejection);
    process.off('uncaughtException', onException);
  }
  return { tally, seconds: (Date.now() - t0) / 1000, seed: o.seed };
}

/** An account's balances, reservations, positions and orders as text (GET /admin/accounts/{id}). */
async function fingerprint(rig: Rig, userId: string): Promise<string> {
  const r = await rig.gw.app.inject({ method: 'GET', url: `/admin/accounts/${userId}`, headers: { [ADMIN_SECRET_HEADER]: rig.env.adminSecret } });
  const d = (JSON.parse(r.body) as { data: Record<string, unknown> }).data;
  // marks move with the oracle's clock: only what the account holds is compared
  const { balance, reserved, positions, open_orders: openOrders, orders } = d as Record<string, unknown>;
  return JSON.stringify({ balance, reserved, positions, openOrders, orders });
}

async function symbolId(rig: Rig, symbol: string): Promise<number> {
  const r = await rig.gw.app.inject({ method: 'GET', url: `/api/v1/instruments/${symbol}` });
  return (JSON.parse(r.body) as { data: { symbol_id: number } }).data.symbol_id;
}

/** The campaign's figures as lines (the CLI prints them; docs/reliability.md quotes them). */
export function report(r: CampaignResult): string[] {
  const t = r.tally;
  const lines = [`fuzz: ${t.total} inputs in ${r.seconds.toFixed(1)} s (seed ${r.seed}); violations: ${t.violations.length}`];
  for (const [k, v] of [...t.inputs].sort()) lines.push(`  ${k.padEnd(22)} ${String(v).padStart(7)} inputs${t.refused.has(k) ? `, ${t.refused.get(k)} refused` : ''}${t.ms.has(k) ? `, ${((t.ms.get(k) ?? 0) / 1000).toFixed(1)} s` : ''}`);
  const kinds = new Map<string, { n: number; input: string }>();
  for (const v of t.violations) {
    const k = `[${v.surface}] ${v.what.replace(/\/[^ ]*/g, '/…')}`;
    const e = kinds.get(k) ?? { n: 0, input: v.input };
    e.n++;
    kinds.set(k, e);
  }
  for (const [k, e] of kinds) lines.push(`  VIOLATION ×${e.n} ${k}\n    e.g. ${e.input.slice(0, 400)}`);
  return lines;
}
