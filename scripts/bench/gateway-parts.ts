// Per-call cost of the gateway parts ADR 0033 changed, in one process, no cluster: µs per call, best
// of 5 rounds. The price window admission with 3,000 live orders in the book; OpSealer.place (Shamir
// and five pair boxes); a cached token's verify; the collector's add of five nodes' results for one
// seq; the resting-order guard's sweep over 3,000 live orders (ADR 0033's hgw4 addendum).
//   node --import tsx scripts/bench/gateway-parts.ts
import { randomBytes } from 'node:crypto';
import pino from 'pino';
import { INSTRUMENTS } from '@tenebra/config';
import { generateX25519, PairBox } from '@tenebra/seal';
import { shareSecret, encodeFieldVector } from '@tenebra/mpc';
import { resultAad } from '@tenebra/wire';
import { PriceWindows } from '../../gateway/src/orders/price-window';
import { OpSealer, ResultOpener } from '../../gateway/src/sharing';
import { TokenService } from '../../gateway/src/auth/tokens';
import { ResultCollector } from '../../gateway/src/results/collector';
import { systemClock } from '../../gateway/src/clock';
import type { GatewayDb } from '../../gateway/src/store/db';
import type { OrderRec } from '../../gateway/src/store/records';
import { LiveState } from '../../gateway/src/ws/live-orders';
import { RestingOrderGuard, type RestingGuardDeps } from '../../gateway/src/orders/resting-guard';
import { windowKeepTicks } from '../../gateway/src/orders/price-window';
import { instrumentBandBps } from '../../gateway/src/orders/fill-loss';
import type { InstrumentSpec } from '@tenebra/config';

const best = (label: string, reps: number, f: (i: number) => void): void => {
  let b = Infinity;
  for (let r = 0; r < 5; r++) {
    const t = performance.now();
    for (let i = 0; i < reps; i++) f(r * reps + i);
    b = Math.min(b, ((performance.now() - t) * 1000) / reps);
  }
  console.log(`${label.padEnd(44)} ${b.toFixed(2).padStart(8)} µs`);
};

const inst = INSTRUMENTS.find((i) => i.symbol === 'ETH-USDC-PERP')!;
const db = { orders: { get: () => ({ status: 'NEW', price_ticks: '330000', book_ticks: '330000', pending_modify: null }), getRange: () => [] } } as unknown as GatewayDb;
const windows = new PriceWindows(db, () => 0);
for (let i = 0; i < 3000; i++) windows.admit(inst, `seed${i}`, 330000n + BigInt(i % 500));
best('price window admit, 3,000 live (+ new ones)', 2000, (i) => windows.admit(inst, `o${i}`, 330000n + BigInt(i % 400)));

const gw = generateX25519();
const nodes = Array.from({ length: 5 }, () => generateX25519());
const sealer = new OpSealer(nodes.map((k, i) => ({ index: i + 1, publicKey: k.publicKey })), 5, 2, gw.privateKey);
best('OpSealer.place (Shamir + 5 pair boxes)', 5000, (i) => {
  sealer.place(String(1000 + i), inst.symbol, { side: 'buy', type: 'limit', tif: 'GTC', priceTicks: 330000n, qtySteps: 10n, ownerId: 7, expiresAtNs: null, aon: false, minFillSteps: null });
});

const tokens = new TokenService(randomBytes(32), 'bench', { revoked: { get: () => undefined } } as unknown as GatewayDb, systemClock());
const tok = (await tokens.issue('0x' + '1'.repeat(40), ['read', 'trade'])).access_token;
await tokens.verify(tok);
let pending: Promise<unknown> = Promise.resolve();
const t0 = performance.now();
for (let i = 0; i < 20000; i++) pending = tokens.verify(tok);
await pending;
console.log(`${'token verify, cached (20,000, once)'.padEnd(44)} ${(((performance.now() - t0) * 1000) / 20000).toFixed(2).padStart(8)} µs`);

const opener = new ResultOpener(nodes.map((k, i) => ({ index: i + 1, publicKey: k.publicKey })), 5, gw.privateKey);
const collector = new ResultCollector({ n: 5, t: 2, opener }, pino({ level: 'silent' }));
const boxes = nodes.map((k) => new PairBox(k.privateKey, gw.publicKey));
const frames = (seq: number) => {
  const sh = shareSecret([BigInt(seq), 5n], 5, 2);
  return boxes.map((b, i) => ({
    t: 'result' as const, node: i + 1, seq: String(seq), job: `batch:${seq}-${seq}:0`,
    pub: JSON.parse(JSON.stringify({ kind: 'place', order_id: `o${seq}`, fills: [{ maker: `m${seq}`, qty_steps: '3', price_ticks: '330000' }], rested: true, cancel_reason: null, reject_reason: null })) as Record<string, unknown>,
    sealed: Buffer.from(b.seal(encodeFieldVector(sh[i]!), resultAad(String(seq), i + 1))).toString('base64'),
  }));
};
const pre = Array.from({ length: 5 * 1000 }, (_, s) => frames(s + 1));
best('collector add, 5 results of one seq', 1000, (i) => {
  for (const f of pre[i]!) collector.add(f, 1n, 0);
});

// The resting-order guard's sweep (risk monitor, four times a second) over 3,000 live orders in the
// 20 books, each book's mark moving by a few ticks every sweep, prices within a quarter of the price
// window's margin (256 to 124,822 ticks by book). "None crossing": bids below the mark and asks above
// it, so after a move at most about 2% of a book is on the loss side. "Half crossing": every other
// order is priced through the mark, as the crossing half of bench:orders' sustained load is while it
// waits for the committee (a bid above the mark, an ask below: the loss side). No order is cancelled:
// a loss-side order without a position is found clear, or not confirmed from the store, which has
// none. The deps carry both the full visit (liveOrders, before ADR 0033's hgw4 addendum) and the
// price index (live), so this part runs against either tree.
// "Re-marked": every account holds a small long in every book, and the view gets new position objects
// (same content) before every sweep, as the risk monitor's mark_price pushes give it at each tick.
const sweepPart = (label: string, crossingEvery: number, remarked = false): void => {
  const live = new LiveState({} as GatewayDb);
  const mid = 1_000_000n;
  const keepOf = (i: InstrumentSpec, mark: bigint) => windowKeepTicks(i, (mark * BigInt(instrumentBandBps(i))) / 10_000n);
  const spreadOf = new Map(INSTRUMENTS.map((i) => [i.symbol, keepOf(i, mid) / 4n]));
  for (let k = 0; k < 3000; k++) {
    const i = INSTRUMENTS[k % INSTRUMENTS.length]!;
    const spread = spreadOf.get(i.symbol)!;
    const side = k % 2 === 0 ? 'buy' : 'sell';
    const off = 1n + ((BigInt(k) * 7919n) % spread);
    const crossing = crossingEvery > 0 && Math.floor(k / 2) % crossingEvery === 0;
    const px = (side === 'buy') !== crossing ? mid - off : mid + off;
    live.trackOrder({
      order_id: `r${k}`, user_id: `u${k % 97}`, client_order_id: null, symbol: i.symbol, side, type: 'limit', time_in_force: 'GTC',
      price_ticks: px.toString(), qty_steps: '10', filled_steps: '0', notional_ts: '0', last_fill_steps: null, last_fill_ticks: null,
      status: 'NEW', cancel_reason: null, reject_reason: null, in_time_ns: String(k), out_time_ns: '0', leverage: 1, fee_pips: '0',
      reserved: '0', journaled: true, seq: null, placed: true,
    } as OrderRec);
  }
  let tick = 0;
  const marks = [0n, 3n, -2n, 5n, 1n, -4n];
  const guard = new RestingOrderGuard({
    db: { orders: { get: () => undefined }, positions: { get: () => undefined }, accounts: { get: () => undefined } },
    registry: { get: (s: string) => INSTRUMENTS.find((i) => i.symbol === s) },
    oracle: { reference: () => ({ ok: true, quote: { mid: mid + marks[tick % marks.length]! } }) },
    log: pino({ level: 'silent' }),
    liveOrders: () => live.allLiveOrders(),
    live,
    livePosition: (u: string, s: string) => (remarked ? positions.get(`${u}|${s}`) : undefined),
    cancel: () => Promise.resolve(),
  } as unknown as RestingGuardDeps);
  const positions = new Map<string, object>();
  const remark = () => {
    for (let u = 0; u < 97; u++) for (const i of INSTRUMENTS) {
      positions.set(`u${u}|${i.symbol}`, { user_id: `u${u}`, symbol: i.symbol, size_steps: '1', basis_ts: mid.toString(), margin: '1000000000', realized_pnl: '0', fees_paid: '0', leverage: 1, updated_ns: '1' });
    }
  };
  best(label, 400, () => {
    tick++;
    if (remarked) remark();
    if (guard.sweep() !== 0) throw new Error('the bench sweep cancelled an order');
  });
};
sweepPart('resting guard sweep, 3,000 live, none crossing', 0);
sweepPart('resting guard sweep, 3,000 live, half crossing', 2);
sweepPart('... half crossing, positions re-marked', 2, true);
