// Chaos on real processes: while orders flow through REST, kill -9 two committee nodes; trading
// goes on, every acknowledged order is accounted for and every fill equals the plaintext reference.
// The killed nodes restart, recover their shares and rejoin (proved by then killing two others);
// the sequencer and the gateway are killed and restarted without losing anything acknowledged.
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { startTestCluster, createAccount, Trader, waitFor, waitForReserve, type TestCluster } from './harness';
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

describe('chaos: kill -9 while orders flow', () => {
  let tc: TestCluster;
  let traders: Trader[] = [];
  const acked: AckedOp[] = [];
  const owner = new Map<string, Trader>();
  const seed = Number(process.env.CHAOS_SEED ?? 20261122);
  const rand = rng(seed);

  beforeAll(async () => {
    tc = await startTestCluster();
    const creds = await Promise.all([0, 1, 2, 3].map(() => createAccount(tc.dataDir, 'Apex', '5000000')));
    traders = creds.map((c) => new Trader(tc.baseUrl, c));
    await Promise.all(traders.map((t) => t.login()));
  }, 150_000);
  afterAll(async () => {
    await tc?.cleanup();
  });

  /** Sends `count` operations one after another (so acknowledgement order is sequence order). */
  async function flow(count: number, onStep?: (i: number) => Promise<void>): Promise<void> {
    for (let i = 0; i < count; i++) {
      await onStep?.(i);
      const places = [...acked].filter((a): a is AckedPlace => a.kind === 'place');
      if (places.length > 4 && rand() < 0.2) {
        const victim = places[Math.floor(rand() * places.length)]!;
        const r = await owner.get(victim.orderId)!.call('DELETE', `/orders/${victim.orderId}`);
        if (r.status === 200) acked.push({ kind: 'cancel', orderId: victim.orderId, symbol: SYMBOL });
        continue;
      }
      const trader = traders[Math.floor(rand() * traders.length)]!;
      const side = rand() < 0.5 ? 'buy' : 'sell';
      const offset = BigInt(Math.floor(rand() * 21) - 10); // +-10 ticks around the mid
      const priceTicks = MID_TICKS + (side === 'buy' ? offset : -offset);
      const qtySteps = 50 + Math.floor(rand() * 450);
      const qty = qtySteps / 1000; // shortest decimal form is exact (e.g. 0.283)
      const tif = rand() < 0.2 ? 'IOC' : 'GTC';
      // 503 means nothing was submitted (e.g. the sequencer is restarting): back off and retry, as the spec asks.
      const body = { symbol: SYMBOL, side, type: 'limit', quantity: qty, price: Number(priceTicks) / 100, time_in_force: tif };
      let r = await trader.place(body);
      for (let wait = 100; r.status === 503 && wait < 20_000; wait *= 2) {
        await new Promise((res) => setTimeout(res, wait));
        r = await trader.place(body);
      }
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      const id = r.body.data!.order_id;
      owner.set(id, trader);
      acked.push({ kind: 'place', orderId: id, symbol: SYMBOL, side, tif, priceTicks, qtySteps: BigInt(qtySteps), owner: BigInt(traders.indexOf(trader) + 1) });
    }
  }

  /** Every acknowledged order reaches exactly the state the plaintext reference gives it. */
  async function verifyAll(timeoutMs = 60_000): Promise<void> {
    const expected = await expectedStates(acked);
    for (const [id, want] of expected) {
      const trader = owner.get(id)!;
      await waitFor(async () => {
        const o = await trader.order(id);
        return steps(Number(o.filled_quantity)) === want.filled && o.status === want.status && (o.cancel_reason ?? null) === want.cancelReason;
      }, timeoutMs, `order ${id} to reach ${JSON.stringify({ ...want, qty: String(want.qty), filled: String(want.filled) })}`);
    }
  }

  it('two nodes killed mid-flow: trading continues and fills equal the reference', async () => {
    // Outages run on the preprocessing reserve, which only five live nodes can fill: start full.
    await waitForReserve(tc.dataDir, [1, 2, 3, 4, 5], 30_000, 15_000, 240_000);
    const killed = [1 + Math.floor(rand() * 5)];
    while (killed.length < 2) {
      const k = 1 + Math.floor(rand() * 5);
      if (!killed.includes(k)) killed.push(k);
    }
    await flow(60, async (i) => {
      if (i === 20) await tc.cluster.kill('committee', killed[0]!);
      if (i === 35) await tc.cluster.kill('committee', killed[1]!);
    });
    await verifyAll();
    // restart them: they recover shares from the three live nodes and rejoin
    for (const k of killed) tc.cluster.spawnProc('committee', k);
    await tc.cluster.waitReady(60_000);
    await flow(20);
    await verifyAll();
    // The reserve is sized for an outage (DESIGN: preprocessing needs all five): let it refill first.
    await waitForReserve(tc.dataDir, [1, 2, 3, 4, 5], 30_000, 15_000, 240_000);
    // now kill two of the nodes that never died: the recovered ones must carry the book
    const others = [1, 2, 3, 4, 5].filter((k) => !killed.includes(k)).slice(0, 2);
    for (const k of others) await tc.cluster.kill('committee', k);
    await flow(30);
    await verifyAll();
    for (const k of others) tc.cluster.spawnProc('committee', k);
    await tc.cluster.waitReady(60_000);
  }, 720_000);

  it('sequencer killed and restarted: every acknowledged order is still there', async () => {
    await flow(15);
    await tc.cluster.restart('sequencer', 0);
    await flow(15);
    await verifyAll();
  }, 240_000);

  it('gateway killed and restarted: every acknowledged order is still there in the same state', async () => {
    await flow(15);
    await verifyAll();
    await tc.cluster.restart('gateway', 0);
    await tc.cluster.waitReady(60_000);
    await Promise.all(traders.map((t) => t.login().catch(() => t.login())));
    await verifyAll();
    await flow(15);
    await verifyAll();
  }, 240_000);
});
