// The gateway's whole contact with secret sharing: split an order's secret fields into Shamir shares
// and seal each node's shares to that node; unseal the nodes' output shares and reconstruct.
// Boxes are pair boxes (@tenebra/seal PairBox): the gateway and each node agree on keys once, so a
// box costs ~10 µs instead of an ephemeral X25519 (docs/decisions/0004-pair-boxes.md).
// It knows nothing else of shares (no arithmetic on them, no protocol). The layout of each op (public
// fields, secret vector) is @tenebra/wire's PLACE_VECTOR / MODIFY_VECTOR / PlacePub / ModifyPub /
// ExpirePub; committee/src/apply.ts (decodeOp) reads it; docs/orders.md describes it.
import {
  shareSecret, reconstruct, reconstructChecked, encodeFieldVector, decodeFieldVector, InconsistentSharesError, F, fieldRngFrom, type FieldRng,
} from '@tenebra/mpc';
import { PairBox, fillRandom } from '@tenebra/seal';
import { opAad, resultAad, type SealedOp, type PlacePub, type ModifyPub, type ExpirePub, type PublicFields } from '@tenebra/wire';
// The associated data of sealed inputs (opAad: kind, order id, symbol) and of sealed outputs
// (resultAad: seq, node) are shared with the committee through @tenebra/wire.

export interface NodeKey {
  index: number;
  publicKey: Uint8Array;
}

/** Builds the SealedOps the gateway submits: public fields in clear, secret fields as sealed shares. */
export class OpSealer {
  private readonly boxes: PairBox[];

  /** gatewayPrivateKey: the gateway's X25519 key; nodes: every node's public key (indices 1..n). */
  constructor(nodes: readonly NodeKey[], private readonly n: number, private readonly t: number, gatewayPrivateKey: Uint8Array) {
    this.boxes = nodeBoxes(nodes, n, gatewayPrivateKey);
  }

  /**
   * A placement. Secret vector [price_ticks, qty_steps, owner_id, min_fill_steps] (@tenebra/wire
   * PLACE_VECTOR; 0 where absent), node i's shares sealed to node i; public fields per PlacePub.
   * A peg's price is public (peg_price_ticks, from the oracle reference): element 0 is 0.
   */
  place(orderId: string, symbol: string, p: PlaceSecrets): SealedOp {
    const pub: PlacePub = { order_id: orderId, side: p.side, type: p.type, time_in_force: p.tif };
    let price = 0n;
    if (p.type === 'peg') {
      if (p.priceTicks === null) throw new Error('internal: a peg order needs its price');
      pub.peg_price_ticks = p.priceTicks.toString();
    } else if (p.priceTicks !== null) {
      price = p.priceTicks;
    }
    if (p.type === 'market') pub.market_cap = p.priceTicks !== null;
    if (p.expiresAtNs !== null) pub.expires_at_ns = p.expiresAtNs.toString();
    if (p.aon) pub.aon = true;
    if (p.minFillSteps !== null) pub.min_fill = true;
    return this.sealed('place', orderId, symbol, { ...pub }, [price, p.qtySteps, BigInt(p.ownerId), p.minFillSteps ?? 0n]);
  }

  /** A modify: secret [qty_delta_steps (signed), new_price_ticks or 0] (MODIFY_VECTOR); public mode and whether the price changes. */
  modify(orderId: string, symbol: string, mode: 'reduce' | 'replace', qtyDeltaSteps: bigint, newPriceTicks: bigint | null): SealedOp {
    const pub: ModifyPub = { order_id: orderId, mode, price_change: newPriceTicks !== null };
    return this.sealed('modify', orderId, symbol, { ...pub }, [F.fromSigned(qtyDeltaSteps), newPriceTicks ?? 0n]);
  }

  /** A cancel: no secret input, but every node still gets a sealed (empty) vector bound to the op. */
  cancel(orderId: string, symbol: string): SealedOp {
    return this.sealed('cancel', orderId, symbol, { order_id: orderId }, []);
  }

  /** Expire the symbol's GTT orders due at the op's sequenced time: no secret input. */
  expire(symbol: string): SealedOp {
    const pub: ExpirePub = { order_id: '' };
    return this.sealed('expire', '', symbol, { ...pub }, []);
  }

  private sealed(kind: string, orderId: string, symbol: string, pub: PublicFields, vector: bigint[]): SealedOp {
    const aad = opAad(kind, orderId, symbol);
    if (vector.length === 0) {
      const empty = encodeFieldVector([]);
      return { kind, symbol, pub, sealed: this.boxes.map((b) => b64(b.seal(empty, aad))) };
    }
    const shares = shareSecret(vector, this.n, this.t, pooledRng);
    return { kind, symbol, pub, sealed: this.boxes.map((b, i) => b64(b.seal(encodeFieldVector(shares[i]!), aad))) };
  }
}

/**
 * @tenebra/mpc's cryptoRng over @tenebra/seal's pooled CSPRNG bytes: cryptoRng's own randomFillSync
 * call per placement cost ~13 µs of the gateway's ~400 µs of sharing and sealing.
 */
export const pooledRng: FieldRng = fieldRngFrom((bytes) => fillRandom(bytes, 0, bytes.length));

/** The secret and public inputs of a placement, as the gateway accepted it. */
export interface PlaceSecrets {
  side: 'buy' | 'sell';
  type: 'limit' | 'market' | 'peg';
  tif: 'GTC' | 'GTT' | 'IOC' | 'FOK';
  /** limit price, market cap, or the peg's price (public for pegs); null for an uncapped market order */
  priceTicks: bigint | null;
  qtySteps: bigint;
  /** the account's small integer owner id (self-trade prevention); never public */
  ownerId: number;
  expiresAtNs: bigint | null;
  aon: boolean;
  minFillSteps: bigint | null;
}

/** The pair box with each node 1..n, in index order; refuses a config that misses a node or has a bad key. */
function nodeBoxes(nodes: readonly NodeKey[], n: number, gatewayPrivateKey: Uint8Array): PairBox[] {
  if (nodes.length !== n) throw new Error(`gateway config lists ${nodes.length} nodes, expected n=${n}`);
  const byIndex = new Map(nodes.map((k) => [k.index, k.publicKey]));
  const boxes: PairBox[] = [];
  for (let i = 1; i <= n; i++) {
    const k = byIndex.get(i);
    if (!k || k.length !== 32) throw new Error(`gateway config: no 32-byte X25519 public key for committee node ${i}`);
    boxes.push(new PairBox(gatewayPrivateKey, k));
  }
  return boxes;
}

/** Opens the nodes' sealed output shares. */
export class ResultOpener {
  private readonly boxes: PairBox[];
  constructor(nodes: readonly NodeKey[], n: number, gatewayPrivateKey: Uint8Array) {
    this.boxes = nodeBoxes(nodes, n, gatewayPrivateKey);
  }

  /** One node's output shares for seq (throws SealError if that node did not seal them to us for that seq). */
  open(sealedB64: string, seq: string, node: number): bigint[] {
    if (sealedB64 === '') return [];
    const box = this.boxes[node - 1];
    if (!box) throw new RangeError(`result from node ${node}, outside 1..${this.boxes.length}`);
    // a pair box only: an anonymous box could come from anyone holding our public key
    return decodeFieldVector(box.open(Buffer.from(sealedB64, 'base64'), resultAad(seq, node)));
  }
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
