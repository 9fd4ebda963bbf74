// The inverse of decodeOp (apply.ts): how the gateway encodes a matching op for the committee, as
// public fields and a secret vector (layout of @tenebra/wire, docs/orders.md). In-process drivers
// (the differential tests, the seeded chaos simulation) share it, so they cannot drift apart.
import { F } from '@tenebra/mpc';
import type { Op } from '@tenebra/matching';

/** The public fields and secret vector of op, as the gateway sends them. */
export function encodeOp(op: Op<bigint>): { pub: Record<string, unknown>; vector: bigint[] } {
  switch (op.kind) {
    case 'place': {
      const pub: Record<string, unknown> = { order_id: op.orderId, side: op.side, type: op.type, time_in_force: op.tif };
      let price = 0n;
      if (op.type === 'peg') pub.peg_price_ticks = op.price!.toString();
      else if (op.price !== null) price = op.price;
      if (op.type === 'market') pub.market_cap = op.price !== null;
      if (op.expiresAtNs != null) pub.expires_at_ns = op.expiresAtNs.toString();
      if (op.aon) pub.aon = true;
      if (op.minFill != null) pub.min_fill = true;
      if (op.owner == null) pub.owner = false;
      return { pub, vector: [price, op.qty, op.owner ?? 0n, op.minFill ?? 0n] };
    }
    case 'modify':
      return {
        pub: { order_id: op.orderId, mode: op.mode, price_change: op.price != null },
        vector: [F.fromSigned(op.qtyDelta), op.price ?? 0n],
      };
    case 'cancel':
      return { pub: { order_id: op.orderId }, vector: [] };
    case 'expire':
      return { pub: { order_id: '' }, vector: [] };
  }
}
