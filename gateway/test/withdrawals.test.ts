// Withdrawals through a real gateway (fake sequencer and committee): free collateral leaves for a
// fresh address on the simulated public chain; reserved margin, reused addresses, bad input and
// reused client ids are refused; a crash between the debit and the chain append is finished at
// start; the chain and the account agree on every amount.
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { join } from 'node:path';
import { newWallet } from '@tenebra/seal';
import { ApiError, TenebraRestClient, newWithdrawalAddress } from '@tenebra/client';
import { startRig, call, newAccount, bearer, summary, type Rig, type Account, type Json } from './harness';
import { SimulatedChain, type WithdrawalTx } from '../src/settlement/chain';

const W = '/api/v1/account/withdrawals';
const fresh = (): string => newWallet().address;
const withdraw = (rig: Rig, a: Account, body: unknown): Promise<Json> => call(rig.gw, 'POST', W, body, bearer(a));

function withdrawalsOnChain(rig: Rig): WithdrawalTx[] {
  return rig.gw.venue.settlement.chain.readAll().map((b) => b.tx).filter((tx): tx is WithdrawalTx => tx.type === 'withdrawal');
}

describe('withdrawals to fresh addresses', () => {
  let rig: Rig;
  beforeAll(async () => {
    rig = await startRig({ venue: { settlementIntervalMs: 3_600_000 }, publicLimits: { perMinute: 10_000, perSecond: 10_000, burst: 10_000 }, risk: { intervalMs: 0 } });
  });
  afterAll(async () => {
    await rig?.close();
  });

  it('releases free collateral to the recipient on chain and debits the account', async () => {
    const a = await newAccount(rig, 'Apex', '1000');
    const to = fresh();
    const r = await withdraw(rig, a, { amount: '250.123456', recipient: to, client_withdrawal_id: 'w-1' });
    expect(r.status, r.raw).toBe(200);
    const d = r.body.data;
    expect(d).toMatchObject({ amount: 250.123456, recipient: to, status: 'released', client_withdrawal_id: 'w-1', free_collateral: 749.876544 });
    expect(d.withdrawal_id).toMatch(/^wd_[0-9a-f]{24}$/);
    expect(d.block.height).toBeGreaterThan(0);

    const s = await summary(rig, a.user_id);
    expect([s.balance, s.withdrawn, s.deposited]).toEqual(['749.876544', '250.123456', '1000']);
    const acct = await call(rig.gw, 'GET', '/api/v1/account', undefined, bearer(a));
    expect(acct.body.data).toMatchObject({ balance: 749.876544, total_withdrawn: 250.123456, total_deposited: 1000 });

    // the chain carries the amount and the address, and nothing that names the account
    const onChain = withdrawalsOnChain(rig).find((tx) => tx.withdrawal_id === d.withdrawal_id)!;
    expect(onChain).toMatchObject({ recipient: to, amount: '250123456' });
    expect(JSON.stringify(rig.gw.venue.settlement.chain.readAll())).not.toContain(a.user_id.slice(2));

    // listed and fetched by id; another account cannot see it
    const list = await call(rig.gw, 'GET', W, undefined, bearer(a));
    expect(list.body.data.withdrawals.map((w: any) => w.withdrawal_id)).toEqual([d.withdrawal_id]);
    const one = await call(rig.gw, 'GET', `${W}/${d.withdrawal_id}`, undefined, bearer(a));
    expect(one.body.data).toMatchObject({ withdrawal_id: d.withdrawal_id, status: 'released', block: d.block });
    const b = await newAccount(rig, 'Apex', '10');
    const other = await call(rig.gw, 'GET', `${W}/${d.withdrawal_id}`, undefined, bearer(b));
    expect([other.status, other.body.error]).toEqual([404, 'not_found']);
  });

  it('a repeated client_withdrawal_id returns the first withdrawal and moves nothing more', async () => {
    const a = await newAccount(rig, 'Apex', '100');
    const to = fresh();
    const first = await withdraw(rig, a, { amount: 10, recipient: to, client_withdrawal_id: 'again' });
    const second = await withdraw(rig, a, { amount: 10, recipient: to, client_withdrawal_id: 'again' });
    expect(second.status, second.raw).toBe(200);
    expect(second.body.data.withdrawal_id).toBe(first.body.data.withdrawal_id);
    expect((await summary(rig, a.user_id)).balance).toBe('90');
    expect(withdrawalsOnChain(rig).filter((tx) => tx.recipient === to)).toHaveLength(1);
    const changed = await withdraw(rig, a, { amount: 11, recipient: to, client_withdrawal_id: 'again' });
    expect([changed.status, changed.body.error]).toEqual([409, 'conflict']);
    expect(changed.body.message).toMatch(/^conflict: client_withdrawal_id 'again' was used/);
  });

  it('never lets margin reserved by open orders leave, nor more than the balance', async () => {
    const a = await newAccount(rig, 'Apex', '1000', { leverage: 10 });
    // 1 ETH at 3000, 10x: 300 USDC of margin plus fees reserved while the order rests
    const o = await call(rig.gw, 'POST', '/api/v1/orders', { symbol: 'ETH-USDC-PERP', side: 'buy', type: 'limit', quantity: 1, price: 3000, time_in_force: 'GTC' }, bearer(a));
    expect(o.status, o.raw).toBe(200);
    const s = await summary(rig, a.user_id);
    const free = s.free_collateral as string;
    expect(Number(free)).toBeLessThan(700.01);
    const over = await withdraw(rig, a, { amount: '700.01', recipient: fresh() });
    expect([over.status, over.body.error]).toEqual([400, 'insufficient_collateral']);
    expect(over.body.message).toContain(`exceeds free collateral of ${free} USDC`);
    expect((await summary(rig, a.user_id)).balance).toBe('1000');
    const all = await withdraw(rig, a, { amount: free, recipient: fresh() });
    expect(all.status, all.raw).toBe(200);
    expect(all.body.data.free_collateral).toBe(0);
    const more = await withdraw(rig, a, { amount: '0.000001', recipient: fresh() });
    expect(more.body.error).toBe('insufficient_collateral');
  });

  it('refuses reused and malformed recipients, bad amounts, unknown fields and a read-only token', async () => {
    const a = await newAccount(rig, 'Apex', '100');
    const b = await newAccount(rig, 'Apex', '100');
    const used = fresh();
    expect((await withdraw(rig, a, { amount: 1, recipient: used })).status).toBe(200);
    const cases: [unknown, number, string, RegExp][] = [
      [{ amount: 1, recipient: used }, 400, 'invalid_request', /was paid before; every withdrawal goes to a fresh address/],
      [{ amount: 1, recipient: b.user_id }, 400, 'invalid_request', /not an account of this venue/],
      [{ amount: 1, recipient: a.user_id }, 400, 'invalid_request', /not an account of this venue/],
      [{ amount: 1, recipient: '0x1234' }, 400, 'invalid_request', /recipient must be an address/],
      [{ amount: 1 }, 400, 'invalid_request', /missing recipient/],
      [{ recipient: fresh() }, 400, 'invalid_request', /missing amount/],
      [{ amount: 0, recipient: fresh() }, 400, 'invalid_request', /amount must be greater than 0/],
      [{ amount: -5, recipient: fresh() }, 400, 'invalid_request', /non-negative decimal/],
      [{ amount: '1.0000001', recipient: fresh() }, 400, 'invalid_request', /at most 6 decimal places/],
      [{ amount: 0.1 + 0.2, recipient: fresh() }, 400, 'invalid_request', /at most 6 decimal places/],
      [{ amount: 1, recipient: fresh(), memo: 'x' }, 400, 'invalid_request', /unknown field 'memo'/],
      [{ amount: 1, recipient: fresh(), client_withdrawal_id: 'a b' }, 400, 'invalid_request', /client_withdrawal_id must be 1 to 64 characters/],
      [[1, 2], 400, 'invalid_request', /must be a JSON object/],
    ];
    for (const [body, status, error, message] of cases) {
      const r = await withdraw(rig, a, body);
      expect([r.status, r.body.error], JSON.stringify(body)).toEqual([status, error]);
      expect(r.body.message).toMatch(message);
    }
    expect((await summary(rig, a.user_id)).balance).toBe('99');

    // checksummed (mixed-case) input is the same address
    const mixed = fresh().replace(/[a-f]/g, (c) => c.toUpperCase()).replace(/^0X/, '0x');
    const ok = await withdraw(rig, a, { amount: 1, recipient: mixed });
    expect(ok.body.data.recipient).toBe(mixed.toLowerCase());

    const tok = await call(rig.gw, 'POST', '/api/v1/auth/token', { grant_type: 'client_credentials', client_id: a.api_key, client_secret: a.api_secret, passphrase: a.passphrase, scope: 'read' });
    const ro = await call(rig.gw, 'POST', W, { amount: 1, recipient: fresh() }, bearer({ token: tok.body.access_token }));
    expect([ro.status, ro.body.error]).toEqual([403, 'insufficient_scope']);
    const none = await call(rig.gw, 'POST', W, { amount: 1, recipient: fresh() });
    expect(none.status).toBe(401);
  });

  it('the shielded pool total on chain moves by every deposit and withdrawal', async () => {
    const a = await newAccount(rig, 'Apex', '50');
    const r1 = await withdraw(rig, a, { amount: 5, recipient: fresh() });
    const pool1 = BigInt(withdrawalsOnChain(rig).at(-1)!.shielded_pool_total);
    expect(BigInt(Math.round(r1.body.data.shielded_pool_total * 1e6))).toBe(pool1);
    const b = await newAccount(rig, 'Apex', '20');
    await withdraw(rig, b, { amount: '7.5', recipient: fresh() });
    const pool2 = BigInt(withdrawalsOnChain(rig).at(-1)!.shielded_pool_total);
    expect(pool2 - pool1).toBe(20_000_000n - 7_500_000n);
  });

  it('through the SDK: a fresh address per withdrawal, one withdrawal per client id, and its errors typed', async () => {
    const a = await newAccount(rig, 'Apex', '300');
    const rest = new TenebraRestClient({ baseUrl: rig.gw.urls.baseUrl, credentials: { apiKey: a.api_key, apiSecret: a.api_secret, passphrase: a.passphrase } });
    const wallet = newWithdrawalAddress();
    expect(wallet.address).toMatch(/^0x[0-9a-f]{40}$/);
    expect(wallet.privateKey).toHaveLength(32);
    const w = await rest.withdraw({ amount: '120.5', recipient: wallet.address, client_withdrawal_id: 'sdk-1' });
    expect(w).toMatchObject({ status: 'released', recipient: wallet.address, client_withdrawal_id: 'sdk-1' });
    const again = await rest.withdraw({ amount: '120.5', recipient: wallet.address, client_withdrawal_id: 'sdk-1' });
    expect(again['withdrawal_id']).toBe(w['withdrawal_id']);
    expect((await rest.getWithdrawal(String(w['withdrawal_id'])))['status']).toBe('released');
    expect((await rest.withdrawals(5)).map((x) => x['withdrawal_id'])).toEqual([w['withdrawal_id']]);
    expect(String((await rest.account())['total_withdrawn'])).toBe('120.5'); // the SDK keeps exact decimals as text
    const err = await rest.withdraw({ amount: 1000, recipient: newWithdrawalAddress().address }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect((err as ApiError).error).toBe('insufficient_collateral');
  });
});

describe('a withdrawal cut off between the debit and the chain', () => {
  it('is released at the next start, once, and the chain still verifies', async () => {
    const rig = await startRig({ venue: { settlementIntervalMs: 3_600_000 }, publicLimits: { perMinute: 10_000, perSecond: 10_000, burst: 10_000 }, risk: { intervalMs: 0 } });
    try {
      const a = await newAccount(rig, 'Apex', '100');
      const chain = rig.gw.venue.settlement.chain;
      // the chain refuses the append, as a crash before it would leave things: debited, pending
      const append = chain.appendDurable.bind(chain);
      chain.appendDurable = () => Promise.reject(new Error('disk gone'));
      const to = fresh();
      const r = await withdraw(rig, a, { amount: 30, recipient: to });
      expect(r.status, r.raw).toBe(200);
      expect(r.body.data).toMatchObject({ status: 'pending', block: null });
      expect((await summary(rig, a.user_id)).balance).toBe('70');
      expect(rig.logged('withdrawal release failed')).toHaveLength(1);
      chain.appendDurable = append;

      await rig.restart();
      const id = r.body.data.withdrawal_id as string;
      let got: Json | undefined;
      for (let i = 0; i < 50; i++) {
        got = await call(rig.gw, 'GET', `${W}/${id}`, undefined, bearer(a));
        if (got.body.data?.status === 'released') break;
        await new Promise((res) => setTimeout(res, 20));
      }
      expect(got!.body.data).toMatchObject({ status: 'released', recipient: to, amount: 30 });
      expect((await summary(rig, a.user_id)).balance).toBe('70');
      expect(withdrawalsOnChain(rig).filter((tx) => tx.withdrawal_id === id)).toHaveLength(1);

      await rig.restart(); // nothing pending: no second append
      expect(withdrawalsOnChain(rig).filter((tx) => tx.withdrawal_id === id)).toHaveLength(1);
      const again = new SimulatedChain(join(rig.env.config.dataDir, 'public-chain.jsonl'));
      again.open(); // verifies every hash and link
      expect(again.hasPaid(to)).toBe(true);
      again.close();
    } finally {
      await rig.close();
    }
  });
});
