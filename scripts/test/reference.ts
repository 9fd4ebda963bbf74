// The plaintext reference for system-level tests: replays the acknowledged operations, in the order
// the sequencer acknowledged them, through the plaintext matching backend and derives every order's
// expected state (filled steps and status) the way the gateway reports it.
import { Exchange, PlaintextBackend, type Op } from '@tenebra/matching';
import { COMPARISON_BITS, INSTRUMENTS } from '@tenebra/config';

export interface AckedPlace {
  kind: 'place';
  orderId: string;
  symbol: string;
  side: 'buy' | 'sell';
  tif: 'GTC' | 'IOC';
  priceTicks: bigint;
  qtySteps: bigint;
  /** any distinct integer per account: the gateway sends owner ids, so self-trades are prevented */
  owner?: bigint;
}
export interface AckedCancel {
  kind: 'cancel';
  orderId: string;
  symbol: string;
}
export type AckedOp = AckedPlace | AckedCancel;

export interface ExpectedOrder {
  qty: bigint;
  filled: bigint;
  status: 'NEW' | 'PARTIALLY_FILLED' | 'FILLED' | 'CANCELLED';
  cancelReason: string | null;
}

/** One fill of the reference: the maker's price (ticks) and the quantity (steps). */
export interface ExpectedFill {
  symbol: string;
  takerId: string;
  makerId: string;
  qtySteps: bigint;
  priceTicks: bigint;
}

/** Expected final state of every placed order after `ops` (in acknowledgement order). */
export async function expectedStates(ops: readonly AckedOp[]): Promise<Map<string, ExpectedOrder>> {
  return (await replay(ops)).states;
}

/** The reference's states and every fill, in sequence (ops of different symbols may interleave: books are independent). */
export async function replay(ops: readonly AckedOp[]): Promise<{ states: Map<string, ExpectedOrder>; fills: ExpectedFill[] }> {
  const ex = new Exchange<bigint>(new PlaintextBackend({ compareBits: COMPARISON_BITS }), { symbols: INSTRUMENTS.map((i) => i.symbol) });
  const states = new Map<string, ExpectedOrder>();
  const fills: ExpectedFill[] = [];
  let seq = 0n;
  for (const a of ops) {
    seq += 1n;
    const op: Op<bigint> = a.kind === 'place'
      ? { kind: 'place', symbol: a.symbol, orderId: a.orderId, seq, side: a.side, type: 'limit', tif: a.tif, price: a.priceTicks, qty: a.qtySteps, owner: a.owner ?? null }
      : { kind: 'cancel', symbol: a.symbol, orderId: a.orderId, seq };
    const r = await ex.apply(op);
    const o = r.outcome;
    if (o.kind === 'place') {
      const taker: ExpectedOrder = { qty: (a as AckedPlace).qtySteps, filled: 0n, status: 'NEW', cancelReason: null };
      states.set(o.orderId, taker);
      for (const id of o.selfTradeCancelled) {
        const m = states.get(id)!;
        m.status = 'CANCELLED';
        m.cancelReason = 'SELF_TRADE_PREVENTION';
      }
      o.fills.forEach((makerId, i) => {
        const q = r.outputs[2 * i]!;
        fills.push({ symbol: a.symbol, takerId: o.orderId, makerId, qtySteps: q, priceTicks: r.outputs[2 * i + 1]! });
        taker.filled += q;
        const m = states.get(makerId)!;
        m.filled += q;
        m.status = m.filled === m.qty ? 'FILLED' : 'PARTIALLY_FILLED';
      });
      if (taker.filled === taker.qty) taker.status = 'FILLED';
      else if (o.cancelReason) {
        taker.status = 'CANCELLED';
        taker.cancelReason = o.cancelReason;
      } else if (taker.filled > 0n) taker.status = 'PARTIALLY_FILLED';
    } else if (o.kind === 'cancel' && o.found) {
      const s = states.get(o.orderId)!;
      s.status = 'CANCELLED';
      s.cancelReason = 'USER_REQUESTED';
    }
  }
  return { states, fills };
}
