// Fresh recipient addresses for withdrawals. The gateway pays each address at most once and never
// holds its key, so the client makes the key pair and keeps the private key to spend what arrives.
import { newWallet, type Wallet } from '@tenebra/seal';

/** A new secp256k1 key pair and its Ethereum-style address (0x + 40 hex), for one withdrawal. */
export function newWithdrawalAddress(): Wallet {
  return newWallet();
}
