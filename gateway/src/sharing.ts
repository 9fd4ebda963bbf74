// The gateway's whole contact with secret sharing: split an order's secret fields into Shamir shares
// and seal each node's shares to that node; unseal the nodes' output shares and reconstruct.
// It knows nothing else of shares (no arithmetic on them, no protocol).
import {
  shareSecret, reconstruct, reconstructChecked, encodeFieldVector, decodeFieldVector, InconsistentSharesError,
} from '@tenebra/mpc';
import { seal, unseal } from '@tenebra/seal';
import { opAad, resultAad, type SealedOp } from '@tenebra/wire';
// The associated data of sealed inputs (opAad: kind, order id, symbol) and of sealed outputs
// (resultAad: seq, node) are shared with the committee through @tenebra/wire.

export interface NodeKey {
  index: number;
  publicKey: Uint8Array;
}

/** Builds the SealedOps the gateway submits: public fields in clear, secret fields as sealed shares. */
export class OpSealer {
  private readonly keys: Uint8Array[];

  constructor(nodes: readonly NodeKey[], private readonly n: number, private readonly t: number) {
    const byIndex = new Map(nodes.map((k) => [k.index, k.publicKey]));
    this.keys = [];
    for (let i = 1; i <= n; i++) {
      const k = byIndex.get(i);
      if (!k || k.length !== 32) throw new Error(`gateway config: no 32-byte X25519 public key for committee node ${i}`);
      this.keys.push(k);
    }
    if (nodes.length !== n) throw new Error(`gateway config lists ${nodes.length} nodes, expected n=${n}`);
  }

  /** A placement: [price_ticks, qty_steps] shared among the n nodes, node i's vector sealed to node i. */
  place(orderId: string, symbol: string, pub: { side: string; type: string; time_in_force: string }, priceTicks: bigint, qtySteps: bigint): SealedOp {
    const shares = shareSecret([priceTicks, qtySteps], this.n, this.t);
    const aad = opAad('place', orderId, symbol);
    const sealed = this.keys.map((k, i) => b64(seal(k, encodeFieldVector(shares[i]!), aad)));
    return { kind: 'place', symbol, pub: { order_id: orderId, side: pub.side, type: pub.type, time_in_force: pub.time_in_force }, sealed };
  }

  /** A cancel: no secret input, but every node still gets a sealed (empty) vector bound to the op. */
  cancel(orderId: string, symbol: string): SealedOp {
    const aad = opAad('cancel', orderId, symbol);
    const empty = encodeFieldVector([]);
    return { kind: 'cancel', symbol, pub: { order_id: orderId }, sealed: this.keys.map((k) => b64(seal(k, empty, aad))) };
  }
}

/** Unseals one node's output shares for seq (throws SealError if not sealed to us for that seq and node). */
export function openResult(privateKey: Uint8Array, sealedB64: string, seq: string, node: number): bigint[] {
  if (sealedB64 === '') return [];
  return decodeFieldVector(unseal(privateKey, Buffer.from(sealedB64, 'base64'), resultAad(seq, node)));
}

export interface NodeVector {
  node: number;
  values: bigint[];
}

export type Decoded =
  | { ok: true; values: bigint[]; used: number[]; bad: number[] }
  | { ok: false; reason: string };

/**
 * Reconstructs the output vector from the nodes' share vectors (in arrival order): the first t+1
 * when that is all there is; with more, checks them all and, if they disagree, finds the nodes whose
 * removal leaves a consistent set (unique while count >= t+1+2e for e bad nodes). Never guesses.
 */
export function decodeOutputs(points: readonly NodeVector[], t: number): Decoded {
  if (points.length < t + 1) return { ok: false, reason: `${points.length} share vectors, need ${t + 1}` };
  // Vectors of a different length than the majority are wrong outright.
  const byLen = new Map<number, NodeVector[]>();
  for (const p of points) byLen.set(p.values.length, [...(byLen.get(p.values.length) ?? []), p]);
  const [len, group] = [...byLen.entries()].sort((a, b) => b[1].length - a[1].length)[0]!;
  const wrongLen = points.filter((p) => p.values.length !== len).map((p) => p.node);
  if (group.length < t + 1) return { ok: false, reason: 'nodes disagree on the number of outputs' };
  if (len === 0) return { ok: true, values: [], used: group.map((p) => p.node), bad: wrongLen };

  const parties = group.map((p) => p.node);
  const shares = group.map((p) => p.values);
  if (group.length === t + 1) return { ok: true, values: reconstruct(parties, shares, t), used: parties, bad: wrongLen };
  try {
    return { ok: true, values: reconstructChecked(parties, shares, t), used: parties, bad: wrongLen };
  } catch (e) {
    if (!(e instanceof InconsistentSharesError)) throw e;
  }
  for (let errors = 1; group.length >= t + 1 + 2 * errors; errors++) {
    for (const drop of combinations(group.length, errors)) {
      const keep = group.filter((_, i) => !drop.includes(i));
      try {
        const values = reconstructChecked(keep.map((p) => p.node), keep.map((p) => p.values), t);
        return { ok: true, values, used: keep.map((p) => p.node), bad: [...wrongLen, ...drop.map((i) => group[i]!.node)] };
      } catch (e) {
        if (!(e instanceof InconsistentSharesError)) throw e;
      }
    }
  }
  return { ok: false, reason: `the ${group.length} share vectors are inconsistent and too few to correct` };
}

/** All k-subsets of 0..n-1 as index arrays, in lexicographic order. */
function* combinations(n: number, k: number): Generator<number[]> {
  const idx = Array.from({ length: k }, (_, i) => i);
  while (true) {
    yield [...idx];
    let i = k - 1;
    while (i >= 0 && idx[i] === n - k + i) i--;
    if (i < 0) return;
    idx[i]!++;
    for (let j = i + 1; j < k; j++) idx[j] = idx[j - 1]! + 1;
  }
}

function b64(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64');
}
