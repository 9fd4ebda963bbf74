// Per-call cost of the gateway parts ADR 0033 changed, in one process, no cluster: µs per call, best
// of 5 rounds. The price window admission with 3,000 live orders in the book; OpSealer.place (Shamir
// and five pair boxes); a cached token's verify; the collector's add of five nodes' results for one seq.
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
