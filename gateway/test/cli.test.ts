// The accounts CLI (scripts/src/accounts.ts) against a listening gateway, found through cluster.json.
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { run } from '../../scripts/src/accounts';
import { startRig, summary, type Rig } from './harness';

const ROOT = resolve(__dirname, '..', '..');
const exec = promisify(execFile);

describe('accounts CLI', () => {
  let rig: Rig;
  let data: string;
  beforeAll(async () => {
    rig = await startRig();
    data = mkdtempSync(join(tmpdir(), 'tenebra-cli-'));
    const g = rig.gw.urls;
    writeFileSync(join(data, 'cluster.json'), JSON.stringify({ env: 'test', gateway: { baseUrl: g.baseUrl, adminUrl: g.adminUrl, adminSecretFile: rig.env.config.adminSecretFile } }));
  });
  afterAll(async () => {
    await rig?.close();
    rmSync(data, { recursive: true, force: true });
  });

  it('create prints exactly one JSON object with working credentials', async () => {
    const { stdout, stderr } = await exec(process.execPath, ['--import', 'tsx', join(ROOT, 'scripts/src/accounts.ts'), '--data', data, 'create', '--tier', 'Select', '--deposit', '2500.5', '--leverage', '5'], { cwd: ROOT });
    expect(stderr).toBe('');
    const lines = stdout.trim().split('\n');
    expect(lines).toHaveLength(1);
    const c = JSON.parse(lines[0]!) as Record<string, string>;
    expect(Object.keys(c).sort()).toEqual(['api_key', 'api_secret', 'passphrase', 'user_id']);
    expect(c.user_id).toMatch(/^0x[0-9a-f]{40}$/);
    const tok = await fetch(`${rig.gw.urls.baseUrl}/auth/token`, {
      method: 'POST', headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ grant_type: 'client_credentials', client_id: c.api_key, client_secret: c.api_secret, passphrase: c.passphrase }),
    });
    expect(tok.status).toBe(200);
    const s = await summary(rig, c.user_id!);
    expect([s.tier, s.leverage, s.balance]).toEqual(['Select', 5, '2500.5']);
  });

  it('deposit credits the balance; rotate replaces the key; show reports balances', async () => {
    const c = await run(['--data', data, 'create', '--tier', 'Core', '--deposit', '10', '--passphrase', 'my passphrase 1']);
    expect(c.passphrase).toBe('my passphrase 1');
    const d = await run(['--data', data, 'deposit', '--user', String(c.user_id), '--amount', '0.000001']);
    expect(d).toMatchObject({ credited: true, balance: '10.000001' });
    const r = await run(['--data', data, 'rotate', '--user', String(c.user_id)]);
    expect(r.api_key).not.toBe(c.api_key);
    const old = await fetch(`${rig.gw.urls.baseUrl}/auth/token`, {
      method: 'POST', headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ grant_type: 'client_credentials', client_id: c.api_key, client_secret: c.api_secret, passphrase: c.passphrase }),
    });
    expect(old.status).toBe(401);
    expect(await run(['--data', data, 'show', '--user', String(c.user_id)])).toMatchObject({ balance: '10.000001', tier: 'Core' });
  });

  it('fails with clear messages', async () => {
    await expect(run(['--data', join(data, 'nowhere'), 'create', '--tier', 'Core', '--deposit', '1'])).rejects.toThrow(/cluster.json does not exist/);
    await expect(run(['--data', data, 'create', '--tier', 'Gold', '--deposit', '1'])).rejects.toThrow(/--tier must be one of/);
    await expect(run(['--data', data, 'create', '--tier', 'Core'])).rejects.toThrow(/--deposit is required/);
    await expect(run(['--data', data, 'deposit', '--user', '0x00', '--amount', '1'])).rejects.toThrow(/404 not_found/);
    await expect(run(['--data', data, 'frobnicate'])).rejects.toThrow(/unknown command/);
    await expect(run(['--bogus'])).rejects.toThrow(/unknown option --bogus/);
    const bad = mkdtempSync(join(tmpdir(), 'tenebra-cli-'));
    writeFileSync(join(bad, 'cluster.json'), '{"gateway":{}}');
    await expect(run(['--data', bad, 'show', '--user', '0x0'])).rejects.toThrow(/no gateway.adminUrl/);
    rmSync(bad, { recursive: true, force: true });
  });
});
