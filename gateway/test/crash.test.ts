// The gateway as a real OS process (main.ts, real listen): kill -9 while results stream in and while
// an order waits for its journal ack; after a restart on the same data folder every outcome is applied
// exactly once and the unacknowledged order is resubmitted under its original rid.
import { describe, it, expect, afterAll } from 'vitest';
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { openSync, closeSync, rmSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { writeJson } from '@tenebra/config';
import { FakeCommittee, FakeSequencer, makeEnv, until } from './fakes';
import { ADMIN_SECRET_HEADER } from '../src/http/routes-admin';

const ROOT = resolve(__dirname, '..', '..');

function freePort(): Promise<number> {
  return new Promise((res, rej) => {
    const s = createServer();
    s.once('error', rej);
    s.listen(0, '127.0.0.1', () => {
      const p = (s.address() as { port: number }).port;
      s.close(() => res(p));
    });
  });
}

describe('gateway process: kill -9 and restart', () => {
  const env = makeEnv();
  const seq = new FakeSequencer(env);
  const committee = new FakeCommittee(env, seq);
  let child: ChildProcess | null = null;
  const logFile = join(env.dir, 'gateway.log');
  const configFile = join(env.dir, 'gateway.json');

  afterAll(async () => {
    committee.close();
    if (child && child.exitCode === null) child.kill('SIGKILL');
    await seq.stop();
    if (!process.env.TENEBRA_KEEP_DATA) rmSync(env.dir, { recursive: true, force: true });
  });

  async function spawnGateway(base: string): Promise<void> {
    const fd = openSync(logFile, 'a');
    child = spawn(process.execPath, ['--import', 'tsx', join(ROOT, 'gateway/src/main.ts'), '--config', configFile], { cwd: ROOT, stdio: ['ignore', fd, fd] });
    closeSync(fd);
    await until(async () => {
      if (child!.exitCode !== null) throw new Error(`gateway exited: ${readFileSync(logFile, 'utf8').slice(-2000)}`);
      try {
        return (await fetch(`${base}/instruments`)).ok;
      } catch {
        return false;
      }
    }, 30_000, 'the gateway process to serve');
  }

  async function kill9(): Promise<void> {
    const c = child!;
    const exited = new Promise((r) => c.once('exit', r));
    c.kill('SIGKILL');
    await exited;
  }

  it('loses nothing acknowledged and applies nothing twice', async () => {
    env.config.sequencerUrl = await seq.start();
    env.config.port = await freePort();
    env.config.internalPort = await freePort();
    env.config.logLevel = 'info';
    env.config.priceBandBps = 0; // the held buy at 2990 lies below every ask on purpose (it must rest, crossing nothing; inside ETH's price window, ADR 0024)
    writeJson(configFile, env.config);
    const host = `http://127.0.0.1:${env.config.port}`;
    const base = `${host}/api/v1`;
    const internal = `ws://127.0.0.1:${env.config.internalPort}`;
    await spawnGateway(base);

    const admin = { 'content-type': 'application/json', [ADMIN_SECRET_HEADER]: env.adminSecret };
    const mk = async () => {
      const r = await fetch(`${host}/admin/accounts`, { method: 'POST', headers: admin, body: JSON.stringify({ tier: 'Apex', deposit: '100000' }) });
      const c = ((await r.json()) as { data: Record<string, string> }).data as Record<string, string> & { user_id: string };
      const t = await fetch(`${base}/auth/token`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ grant_type: 'client_credentials', client_id: c.api_key, client_secret: c.api_secret, passphrase: c.passphrase }) });
      return { ...c, user_id: c.user_id!, token: ((await t.json()) as { access_token: string }).access_token };
    };
    const [a, b] = await Promise.all([mk(), mk()]);
    const post = (who: { token: string }, body: object) => fetch(`${base}/orders`, {
      method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${who.token}` }, body: JSON.stringify(body),
    });
    const eth = (side: string, price: number, tif = 'GTC') => ({ symbol: 'ETH-USDC-PERP', side, type: 'limit', quantity: 0.1, price, time_in_force: tif });

    // 20 resting sells and 20 IOC buys that each take one of them; the committee holds its results back.
    const N = 20;
    for (let i = 0; i < N; i++) expect((await post(a, eth('sell', 3000 + i))).status).toBe(200);
    for (let i = 0; i < N; i++) expect((await post(b, eth('buy', 3000 + i, 'IOC'))).status).toBe(200);
    expect(seq.journal).toHaveLength(2 * N);

    // An order waits for its journal ack while the results trickle in; kill -9 half way through.
    seq.hold = true;
    const pending = post(a, eth('buy', 2990)).catch(() => null); // its connection dies with the process
    await until(() => seq.heldCount === 1, 5_000, 'the held submit');
    for (const nd of committee.nodes) nd.trickleMs = 10;
    await committee.connect(internal);
    const summary = async (id: string) => ((await (await fetch(`${host}/admin/accounts/${id}`, { headers: admin })).json()) as { data: Record<string, any> }).data;
    await until(async () => {
      const size = Number((await summary(b.user_id)).positions[0]?.size_steps ?? 0);
      return size >= 300 && size <= 1500;
    }, 10_000, 'some but not all fills to be applied');
    await kill9();
    expect(await pending).toBeNull();
    committee.close();
    for (const nd of committee.nodes) nd.trickleMs = 0;

    await spawnGateway(base);
    for (const nd of committee.nodes.slice(0, 2)) nd.resendAll = true; // duplicates of applied results
    await committee.connect(internal);
    seq.release(); // the dead connection's submit and the resubmission (same rid) journal once
    await until(() => seq.journal.length === 2 * N + 1 && committee.nodes.every((nd) => nd.results.length === 2 * N + 1), 10_000, 'the resubmitted order');

    // a's balance includes the Apex instant taker bonus of its 20 maker fills (Σ 20% of 60,000 + 20i micro = 0.24076)
    const want = { a: { balance: '99398.94266', reserved: '29.9598', open_orders: 1, size: '-2000' }, b: { balance: '99396.8962', reserved: '0', open_orders: 0, size: '2000' } };
    await until(async () => {
      const [sa, sb] = [await summary(a.user_id), await summary(b.user_id)];
      return sb.positions[0]?.size_steps === '2000' && sa.open_orders === 1 ? true : null;
    }, 10_000, 'every outcome to be applied');
    await new Promise((r) => setTimeout(r, 200)); // any double application would show by now
    for (const [acct, w] of [[a, want.a], [b, want.b]] as const) {
      const s = await summary(acct.user_id);
      expect({ balance: s.balance, reserved: s.reserved, open_orders: s.open_orders, size: s.positions[0].size_steps }).toEqual(w);
    }
    const rids = seq.journal.map((j) => j.rid);
    expect(new Set(rids).size).toBe(rids.length);
    expect(readFileSync(logFile, 'utf8')).toContain('resubmitting unacknowledged ops from the outbox');

    // graceful stop exits 0
    const c = child!;
    const code = new Promise((r) => c.once('exit', (x) => r(x)));
    c.kill('SIGTERM');
    expect(await code).toBe(0);
  });
});
