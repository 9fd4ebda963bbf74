// Wallet addresses of the simulated public chain, in Ethereum's form: the last 20 bytes of the
// Keccak-256 of an uncompressed secp256k1 public key (without its 0x04 prefix), as 0x + 40 hex.
// A withdrawal pays a fresh one, so nothing on chain links it to the account that withdrew.
import { secp256k1 } from '@noble/curves/secp256k1.js';
import { keccak_256 } from '@noble/hashes/sha3.js';
import { toHex } from './bytes';

export interface Wallet {
  /** 0x + 40 lowercase hex */
  address: string;
  /** 32 bytes; whoever holds it spends what the address received */
  privateKey: Uint8Array;
}

const ADDRESS = /^0x[0-9a-f]{40}$/;

/** The address of a secp256k1 public key (33-byte compressed or 65-byte uncompressed). */
export function walletAddress(publicKey: Uint8Array): string {
  const point = secp256k1.Point.fromBytes(publicKey).toBytes(false);
  return `0x${toHex(keccak_256(point.subarray(1)).subarray(12))}`;
}

/** A fresh key pair and its address (random private key from the OS). */
export function newWallet(): Wallet {
  const privateKey = secp256k1.utils.randomSecretKey();
  return { address: walletAddress(secp256k1.getPublicKey(privateKey, false)), privateKey };
}

/** True iff s is an address in the canonical form (0x + 40 lowercase hex). */
export function isWalletAddress(s: unknown): s is string {
  return typeof s === 'string' && ADDRESS.test(s);
}
