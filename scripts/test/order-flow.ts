// A seeded stream of limit orders and cancels sent through REST one after another (so acknowledgement
// order is sequence order), and the check that every acknowledged order reaches exactly the state the
// plaintext reference gives it. Shared by the chaos, committee-restart and frozen-node tests.
import { expect } from 'vitest';
import type { ClusterOptions } from '../src/cluster';
import { Trader, createAccount, startTestCluster, waitFor, type Envelope, type TestCluster } from './harness';
import { expectedStates, type AckedOp, type AckedPlace } from './reference';

const SYMBOL = 'ETH-USDC-PERP'; // tick 0.01, step 0.001
const MID_TICKS = 300_000n; // 3000.00

/** Small seeded PRNG so a failing run can be replayed. */
function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s ^ (s >>> 15), 0x2c1b3c6d) + 0x6d2b79f5) >>> 0;
    return s / 2 ** 32;
  };
}

const steps = (x: number) => BigInt(Math.round(x * 1000));

export class OrderFlow {
  readonly acked: AckedOp[] = [];
  private readonly owner = new Map<string, Trader>();
  readonly rand: () => number;

  constructor(private readonly traders: Trader[], seed: number) {
    this.rand = rng(seed);
  }

  /** Sends `count` operations one after another; onStep runs before each (e.g. to kill a process). */
  async run(count: number, onStep?: (i: number) => Promise<void>): Promise<void> {
    const rand = this.rand;
    for (let i = 0; i < count; i++) {
      await onStep?.(i);
      const places = this.acked.filter((a): a is AckedPlace => a.kind === 'place');
      if (places.length > 4 && rand() < 0.2) {
        const victim = places[Math.floor(rand() * places.length)]!;
        const r = await this.owner.get(victim.orderId)!.call('DELETE', `/orders/${victim.orderId}`);
        // 200: applied. 202 QUEUED: journaled (the sequencer was up: else 503), but the committee did
        // not answer within the gateway's wait (e.g. while it restarts), so it applies later; since
        // ops go one at a time it still holds its place in the sequence. 409: nothing was submitted.
        if (r.status === 200 || r.status === 202) this.acked.push({ kind: 'cancel', orderId: victim.orderId, symbol: SYMBOL });
        continue;
      }
      await this.placeRandom(true);
    }
  }

  /**
   * One seeded limit placement. retry503: back off and retry on 503 (nothing was submitted, e.g. the
   * sequencer is restarting, as the spec asks) and require a 200; otherwise return the first answer.
   * A 200 is recorded as acknowledged; nothing else is.
   */
  async placeRandom(retry503 = false): Promise<{ status: number; body: Envelope<{ order_id: string; status: string }> }> {
    const rand = this.rand;
    const trader = this.traders[Math.floor(rand() * this.traders.length)]!;
    const side = rand() < 0.5 ? 'buy' : 'sell';
    const offset = BigInt(Math.floor(rand() * 21) - 10); // +-10 ticks around the mid
    const priceTicks = MID_TICKS + (side === 'buy' ? offset : -offset);
    const qtySteps = 50 + Math.floor(rand() * 450);
    const qty = qtySteps / 1000; // shortest decimal form is exact (e.g. 0.283)
    const tif = rand() < 0.2 ? 'IOC' : 'GTC';
    const body = { symbol: SYMBOL, side, type: 'limit', quantity: qty, price: Number(priceTicks) / 100, time_in_force: tif };
    let r = await trader.place(body);
    for (let wait = 100; retry503 && r.status === 503 && wait < 20_000; wait *= 2) {
      await new Promise((res) => setTimeout(res, wait));
      r = await trader.place(body);
    }
    if (retry503) expect(r.status, JSON.stringify(r.body)).toBe(200);
    if (r.status === 200) {
      const id = r.body.data!.order_id;
      this.owner.set(id, trader);
      this.acked.push({ kind: 'place', orderId: id, symbol: SYMBOL, side, tif, priceTicks, qtySteps: BigInt(qtySteps), owner: BigInt(this.traders.indexOf(trader) + 1) });
    }
    return r;
  }

  /** Every acknowledged order reaches exactly the state the plaintext reference gives it. */
  async verifyAll(timeoutMs = 60_000): Promise<void> {
    const expected = await expectedStates(this.acked);
    for (const [id, want] of expected) {
      const trader = this.owner.get(id)!;
      let seen = 'nothing yet';
      await waitFor(async () => {
        const o = await trader.order(id);
        seen = JSON.stringify({ status: o.status, filled: o.filled_quantity, cancelReason: o.cancel_reason ?? null });
        return steps(Number(o.filled_quantity)) === want.filled && o.status === want.status && (o.cancel_reason ?? null) === want.cancelReason;
      }, timeoutMs, () => `order ${id} to reach ${JSON.stringify({ ...want, qty: String(want.qty), filled: String(want.filled) })} (last seen: ${seen})`);
    }
  }
}

/** A test cluster with `traders` funded Apex accounts logged in, and a seeded order flow over them. */
export async function startFlowCluster(seed: number, traders: number, opts: Partial<ClusterOptions> = {}): Promise<{ tc: TestCluster; traders: Trader[]; orders: OrderFlow }> {
  const tc = await startTestCluster(opts);
  const creds = await Promise.all(Array.from({ length: traders }, () => createAccount(tc.dataDir, 'Apex', '5000000')));
  const ts = creds.map((c) => new Trader(tc.baseUrl, c));
  await Promise.all(ts.map((t) => t.login()));
  return { tc, traders: ts, orders: new OrderFlow(ts, seed) };
}
