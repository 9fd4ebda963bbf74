/** Thrown by unseal on any failure: bad length, wrong key, tampered ciphertext or aad. */
export class SealError extends Error {
  override name = 'SealError';
}

/** Thrown when an enclave quote does not verify: malformed, bad signature, or measurement mismatch. */
export class AttestationError extends Error {
  override name = 'AttestationError';
}
