// Attestation quotes (modelled). A real TEE vendor key signs (measurement, enclave key); here a
// platform Ed25519 key held by the launcher plays the vendor. verifyQuote checks the signature and
// that the measurement equals the one the verifier computed from the code it expects.
// A quote alone can be replayed by an impostor; proveEnclaveKey/checkEnclaveProof bind a live
// connection to the quoted enclave key with a fresh challenge.
import { randomBytes } from 'node:crypto';
import { AttestationError } from './errors';
import { concatBytes, fromHex, toHex, utf8 } from './bytes';
import { sign, verify } from './ed25519';

/** Same shape as Quote in @tenebra/wire (kept here so seal does not depend on wire; wire checks the match). */
export interface Quote {
  measurement: string;
  enclave_pubkey: string;
  issued_at: string;
  platform_signature: string;
}

const HEX64 = /^[0-9a-f]{64}$/;
const HEX128 = /^[0-9a-f]{128}$/;

/** The exact bytes the platform key signs for a quote. */
export function quoteMessage(measurement: string, enclavePubkeyHex: string, issuedAt: string): Uint8Array {
  return utf8(`tenebra-quote-v1\n${measurement}\n${enclavePubkeyHex}\n${issuedAt}`);
}

/** A quote signed by the platform key over measurement and the enclave's Ed25519 public key. */
export function makeQuote(platformPrivateKey: Uint8Array, measurement: string, enclavePublicKey: Uint8Array): Quote {
  if (!HEX64.test(measurement)) throw new TypeError('measurement must be 64 lower-case hex chars');
  if (enclavePublicKey.length !== 32) throw new TypeError('enclave public key must be 32 bytes');
  const enclave_pubkey = toHex(enclavePublicKey);
  const issued_at = new Date().toISOString();
  const sig = sign(platformPrivateKey, quoteMessage(measurement, enclave_pubkey, issued_at));
  return { measurement, enclave_pubkey, issued_at, platform_signature: toHex(sig) };
}

/** Checks a quote; returns the enclave public key; throws AttestationError saying what is wrong. */
export function verifyQuote(quote: Quote, platformPublicKey: Uint8Array, expectedMeasurement: string): Uint8Array {
  if (typeof quote !== 'object' || quote === null) throw new AttestationError('attestation failed: quote is not an object');
  const { measurement, enclave_pubkey, issued_at, platform_signature } = quote;
  if (typeof measurement !== 'string' || !HEX64.test(measurement)) {
    throw new AttestationError('attestation failed: malformed quote (measurement is not 64 hex chars)');
  }
  if (typeof enclave_pubkey !== 'string' || !HEX64.test(enclave_pubkey)) {
    throw new AttestationError('attestation failed: malformed quote (enclave_pubkey is not 64 hex chars)');
  }
  if (typeof issued_at !== 'string' || Number.isNaN(Date.parse(issued_at))) {
    throw new AttestationError('attestation failed: malformed quote (issued_at is not an RFC 3339 time)');
  }
  if (typeof platform_signature !== 'string' || !HEX128.test(platform_signature)) {
    throw new AttestationError('attestation failed: malformed quote (platform_signature is not 128 hex chars)');
  }
  if (platformPublicKey.length !== 32) throw new AttestationError('attestation failed: platform public key must be 32 bytes');
  const msg = quoteMessage(measurement, enclave_pubkey, issued_at);
  if (!verify(platformPublicKey, msg, fromHex(platform_signature))) {
    throw new AttestationError('attestation failed: quote signature does not verify under the platform key');
  }
  if (measurement !== expectedMeasurement) {
    throw new AttestationError(
      `attestation failed: measurement mismatch (enclave reports ${measurement}, expected ${expectedMeasurement})`,
    );
  }
  return fromHex(enclave_pubkey);
}

/** A fresh 32-byte challenge, hex. */
export function newChallenge(): string {
  return randomBytes(32).toString('hex');
}

function proofMessage(challengeHex: string): Uint8Array {
  return concatBytes(utf8('tenebra-enclave-proof-v1\n'), utf8(challengeHex));
}

/** Enclave side: signature with the enclave key over the client's challenge, hex. */
export function proveEnclaveKey(enclavePrivateKey: Uint8Array, challengeHex: string): string {
  return toHex(sign(enclavePrivateKey, proofMessage(challengeHex)));
}

/** Client side: throws AttestationError unless sigHex is the quoted enclave key's signature of challengeHex. */
export function checkEnclaveProof(enclavePublicKey: Uint8Array, challengeHex: string, sigHex: string): void {
  if (typeof sigHex !== 'string' || !HEX128.test(sigHex)) {
    throw new AttestationError('attestation failed: malformed enclave proof');
  }
  if (!verify(enclavePublicKey, proofMessage(challengeHex), fromHex(sigHex))) {
    throw new AttestationError('attestation failed: the peer does not hold the quoted enclave key (replayed quote?)');
  }
}


