// Hiding commitments of per-account settlement deltas and the Merkle tree over them (pure).
//
// commitment = SHA-256("tenebra-settlement-v1|" batch_id "|" user_id "|" delta_json "|" salt_hex)
// with a fresh 256-bit salt per entry, so the public chain learns nothing about a delta (the
// commitment is hiding under SHA-256) while the account, given its opening (delta_json, salt) by
// GET /settlement/status, can check its entry and its Merkle path to the root published on chain.
import { createHash, randomBytes } from 'node:crypto';

export const COMMITMENT_DOMAIN = 'tenebra-settlement-v1';

/** One position's change since its last settlement (integers as decimal strings: steps, micro-USDC). */
export interface PositionDelta {
  symbol: string;
  size_steps: string;
  margin: string;
  realized_pnl: string;
  fees: string;
}

/** An account's change in one batch; collateral = realized_pnl − fees − margin moved into positions. */
export interface AccountDelta {
  collateral: string;
  positions: PositionDelta[];
}

/** The canonical JSON text of a delta that the commitment covers (fixed key order, symbols sorted). */
export function deltaJson(d: AccountDelta): string {
  const positions = [...d.positions].sort((a, b) => (a.symbol < b.symbol ? -1 : a.symbol > b.symbol ? 1 : 0));
  return JSON.stringify({
    collateral: d.collateral,
    positions: positions.map((p) => ({ symbol: p.symbol, size_steps: p.size_steps, margin: p.margin, realized_pnl: p.realized_pnl, fees: p.fees })),
  });
}

/** A fresh random salt (hex of 32 bytes). */
export function newSalt(): string {
  return randomBytes(32).toString('hex');
}

/** The commitment (hex SHA-256) to an account's delta in a batch. */
export function commit(batchId: string, userId: string, json: string, saltHex: string): string {
  return sha256Hex(`${COMMITMENT_DOMAIN}|${batchId}|${userId}|${json}|${saltHex}`);
}

export function sha256Hex(text: string | Buffer): string {
  return createHash('sha256').update(text).digest('hex');
}

function nodeHash(left: string, right: string): string {
  return createHash('sha256').update(Buffer.from(`01${left}${right}`, 'hex')).digest('hex');
}

function leafHash(leaf: string): string {
  return createHash('sha256').update(Buffer.from(`00${leaf}`, 'hex')).digest('hex');
}

/** Merkle root of hex leaves (leaf and node hashes domain-separated; an odd node is paired with itself). */
export function merkleRoot(leaves: readonly string[]): string {
  if (leaves.length === 0) throw new Error('merkleRoot: no leaves');
  let level = leaves.map(leafHash);
  while (level.length > 1) {
    const next: string[] = [];
    for (let i = 0; i < level.length; i += 2) next.push(nodeHash(level[i]!, level[i + 1] ?? level[i]!));
    level = next;
  }
  return level[0]!;
}

export interface ProofStep {
  /** sibling hash */
  hash: string;
  /** where the sibling sits */
  side: 'left' | 'right';
}

/** The Merkle path of leaf `index`. */
export function merkleProof(leaves: readonly string[], index: number): ProofStep[] {
  if (index < 0 || index >= leaves.length) throw new RangeError('merkleProof: index out of range');
  const proof: ProofStep[] = [];
  let level = leaves.map(leafHash);
  let i = index;
  while (level.length > 1) {
    const sib = i % 2 === 0 ? (level[i + 1] ?? level[i]!) : level[i - 1]!;
    proof.push({ hash: sib, side: i % 2 === 0 ? 'right' : 'left' });
    const next: string[] = [];
    for (let k = 0; k < level.length; k += 2) next.push(nodeHash(level[k]!, level[k + 1] ?? level[k]!));
    level = next;
    i = Math.floor(i / 2);
  }
  return proof;
}

/** True iff leaf with proof hashes up to root. */
export function verifyMerkle(leaf: string, proof: readonly ProofStep[], root: string): boolean {
  let h = leafHash(leaf);
  for (const s of proof) h = s.side === 'right' ? nodeHash(h, s.hash) : nodeHash(s.hash, h);
  return h === root;
}
