// @tenebra/seal: sealed boxes to X25519 keys, Ed25519 signatures, modelled enclave quotes, key files.
export { SealError, AttestationError } from './errors';
export { toHex, fromHex, concatBytes, utf8 } from './bytes';
export { generateX25519 } from './x25519';
export { seal, unseal, sealKey, SEAL_OVERHEAD } from './seal';
export { PairBox, pairKey, PAIR_OVERHEAD } from './pair';
export { fillRandom } from './random-pool';
export { generateEd25519, ed25519PublicKey, sign, verify } from './ed25519';
export type { Quote } from './quote';
export { makeQuote, verifyQuote, quoteMessage, newChallenge, proveEnclaveKey, checkEnclaveProof } from './quote';
export { measureFiles, canonicalJson } from './measure';
export type { KeyPair, KeyType } from './keyfile';
export { writeKeyFile, readKeyFile, writePublicKeyFile, readPublicKeyFile } from './keyfile';
export type { Wallet } from './wallet';
export { newWallet, walletAddress, isWalletAddress } from './wallet';
