// Two environments as real gateway processes (production and test, each with its own data folder,
// JWT secret and port, each attested to its own sequencer): accounts made with the accounts CLI in
// one are unknown to the other, and neither accepts the other's tokens. Also the CLI's tier and
// rotate commands against a live process.
import { describe, it, expect, afterAll } from 'vitest';
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { closeSync, openSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { writeJson, type Env } from '@tenebra/config';
import { FakeSequencer, makeEnv, until, type TestEnv } from '../../gateway/test/fakes';
import { run } from '../src/accounts';
import { ROOT } from '../src/cluster';

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

interface Proc {
  env: TestEnv;
  seq: FakeSequencer;
  child: ChildProcess;
  base: string;
}

async function startGateway(name: Env): Promise<Proc> {
  const env = makeEnv();
  env.config.env = name;
  const seq = new FakeSequencer(env);
  env.config.sequencerUrl = await seq.start();
  env.config.port = await freePort();
  env.config.internalPort = await freePort();
  env.config.logLevel = 'warn';
  const configFile = join(env.dir, 'gateway.json');
  writeJson(configFile, env.config);
  const base = `http://127.0.0.1:${env.config.port}/api/v1`;
  // what `npm start` writes, so the accounts CLI finds the gateway with --data
  writeJson(join(env.dir, 'cluster.json'), { env: name, gateway: { baseUrl: base, adminUrl: `http://127.0.0.1:${env.config.port}/admin`, adminSecretFile: env.config.adminSecretFile } });
  const logFile = join(env.dir, 'gateway.log');
  const fd = openSync(logFile, 'a');
  const child = spawn(process.execPath, ['--import', 'tsx', join(ROOT, 'gateway/src/main.ts'), '--config', configFile], { cwd: ROOT, stdio: ['ignore', fd, fd] });
  closeSync(fd);
  await until(async () => {
    if (child.exitCode !== null) throw new Error(`gateway exited: ${readFileSync(logFile, 'utf8').slice(-2000)}`);
    try {
      return (await fetch(`${base}/vip/tiers`)).ok;
    } catch {
      return false;
    }
  }, 30_000, `the ${name} gateway to serve`);
  return { env, seq, child, base };
}

async function http(base: string, method: string, path: string, body?: unknown, token?: string): Promise<{ status: number; body: any }> {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: { ...(body ? { 'content-type': 'application/json' } : {}), ...(token ? { authorization: `Bearer ${token}` } : {}) },
    ...(body ? { body: JSON.stringify(body) } : {}),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : {} };
}

const login = (p: Proc, c: Record<string, unknown>) => http(p.base, 'POST', '/auth/token', { grant_type: 'client_credentials', client_id: c.api_key, client_secret: c.api_secret, passphrase: c.passphrase });

describe('production and test environments (real processes)', () => {
  const procs: Proc[] = [];
  afterAll(async () => {
    for (const p of procs) {
      if (p.child.exitCode === null) {
        const exited = new Promise((r) => p.child.once('exit', r));
        p.child.kill('SIGTERM');
        await exited;
      }
      await p.seq.stop();
      rmSync(p.env.dir, { recursive: true, force: true });
    }
  });

  it('keeps credentials, tokens and balances apart; the CLI rotates keys and assigns tiers', async () => {
    const [prod, test] = await Promise.all([startGateway('production'), startGateway('test')]);
    procs.push(prod, test);
    const cp = await run(['--data', prod.env.dir, 'create', '--tier', 'Core', '--deposit', '500', '--passphrase', 'prod-pass-1']);
    const ct = await run(['--data', test.env.dir, 'create', '--tier', 'Core', '--deposit', '700', '--scopes', 'read']);
    const tp = (await login(prod, cp)).body.access_token as string;
    const tt = await login(test, ct);
    expect(tt.body.scope).toBe('read');
    expect((await http(prod.base, 'GET', '/account', undefined, tp)).body.data).toMatchObject({ environment: 'production', balance: 500 });
    expect((await http(test.base, 'GET', '/account', undefined, tt.body.access_token)).body.data).toMatchObject({ environment: 'test', balance: 700 });
    // each refuses the other's token and credentials
    const cross = await http(test.base, 'GET', '/account', undefined, tp);
    expect([cross.status, cross.body.error]).toEqual([401, 'invalid_token']);
    expect((await http(prod.base, 'GET', '/account', undefined, tt.body.access_token)).status).toBe(401);
    expect((await login(test, cp)).body.error).toBe('invalid_client');
    expect((await login(prod, ct)).body.error).toBe('invalid_client');
    // read-only key: no trading
    const place = await http(test.base, 'POST', '/orders', { symbol: 'ETH-USDC-PERP', side: 'buy', type: 'limit', quantity: 1, price: 3000, time_in_force: 'GTC' }, tt.body.access_token);
    expect([place.status, place.body.error]).toEqual([403, 'insufficient_scope']);
    // tier and rotate through the CLI
    expect(await run(['--data', prod.env.dir, 'tier', '--user', String(cp.user_id), '--tier', 'Prime'])).toEqual({ user_id: cp.user_id, assigned_tier: 'Prime', tier: 'Prime' });
    expect((await http(prod.base, 'GET', '/account/vip', undefined, tp)).body.data).toMatchObject({ tier: 'Prime', maker_fee_bps: -0.5, taker_fee_bps: 2.5 });
    const rotated = await run(['--data', prod.env.dir, 'rotate', '--user', String(cp.user_id)]);
    expect(rotated.api_key).not.toBe(cp.api_key);
    expect((await login(prod, cp)).body.error).toBe('invalid_client');
    expect((await login(prod, rotated)).status).toBe(200);
    await expect(run(['--env', 'staging', 'show', '--user', 'x'])).rejects.toThrow(/--env must be production or test/);
    await expect(run(['--data', prod.env.dir, 'tier', '--user', String(cp.user_id), '--tier', 'Gold'])).rejects.toThrow(/--tier must be one of/);
  });
});
