import { mkdtempSync, writeFileSync, statSync, chmodSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  AttestationError, canonicalJson, checkEnclaveProof, generateEd25519, generateX25519, makeQuote, measureFiles,
  newChallenge, proveEnclaveKey, readKeyFile, readPublicKeyFile, sign, verify, verifyQuote, writeKeyFile,
  writePublicKeyFile, utf8,
} from '../src/index';

describe('ed25519', () => {
  it('signs and verifies; rejects other messages, keys and garbage', () => {
    const k = generateEd25519();
    const sig = sign(k.privateKey, utf8('hello'));
    expect(verify(k.publicKey, utf8('hello'), sig)).toBe(true);
    expect(verify(k.publicKey, utf8('hellp'), sig)).toBe(false);
    expect(verify(generateEd25519().publicKey, utf8('hello'), sig)).toBe(false);
    expect(verify(k.publicKey, utf8('hello'), new Uint8Array(3))).toBe(false);
  });
});

describe('measurement', () => {
  const dir = mkdtempSync(join(tmpdir(), 'measure-'));
  const a = join(dir, 'a.ts');
  const b = join(dir, 'b.ts');
  writeFileSync(a, 'export const a = 1;\n');
  writeFileSync(b, 'export const b = 2;\n');

  it('is order independent and sensitive to code and config', () => {
    const m = measureFiles([a, b], { n: 5, port: 1 });
    expect(m).toMatch(/^[0-9a-f]{64}$/);
    expect(measureFiles([b, a], { port: 1, n: 5 })).toBe(m);
    expect(measureFiles([a, b], { n: 4, port: 1 })).not.toBe(m);
    writeFileSync(b, 'export const b = 3;\n');
    expect(measureFiles([a, b], { n: 5, port: 1 })).not.toBe(m);
  });

  it('canonical JSON sorts keys at every depth', () => {
    expect(canonicalJson({ b: 1, a: { d: [1, { z: 1, y: 2 }], c: 2n } })).toBe('{"a":{"c":"2","d":[1,{"y":2,"z":1}]},"b":1}');
  });
});

describe('quotes', () => {
  const platform = generateEd25519();
  const enclave = generateEd25519();
  const m = 'ab'.repeat(32);

  it('verifies a good quote and returns the enclave key', () => {
    const q = makeQuote(platform.privateKey, m, enclave.publicKey);
    expect(Buffer.from(verifyQuote(q, platform.publicKey, m)).equals(enclave.publicKey)).toBe(true);
  });

  it('refuses a quote signed by another platform key', () => {
    const q = makeQuote(generateEd25519().privateKey, m, enclave.publicKey);
    expect(() => verifyQuote(q, platform.publicKey, m)).toThrow(/signature does not verify/);
  });

  it('refuses a quote whose fields were altered after signing', () => {
    const q = makeQuote(platform.privateKey, m, enclave.publicKey);
    expect(() => verifyQuote({ ...q, enclave_pubkey: 'cd'.repeat(32) }, platform.publicKey, m)).toThrow(AttestationError);
    expect(() => verifyQuote({ ...q, measurement: 'cd'.repeat(32) }, platform.publicKey, 'cd'.repeat(32))).toThrow(
      /signature does not verify/,
    );
  });

  it('refuses a measurement mismatch and names both values', () => {
    const q = makeQuote(platform.privateKey, m, enclave.publicKey);
    expect(() => verifyQuote(q, platform.publicKey, 'cd'.repeat(32))).toThrow(/measurement mismatch.*abab.*expected cdcd/);
  });

  it('refuses malformed quotes', () => {
    const q = makeQuote(platform.privateKey, m, enclave.publicKey);
    expect(() => verifyQuote({ ...q, platform_signature: 'zz' }, platform.publicKey, m)).toThrow(/malformed/);
    expect(() => verifyQuote({ ...q, issued_at: 'yesterday' }, platform.publicKey, m)).toThrow(/malformed/);
    expect(() => verifyQuote(null as never, platform.publicKey, m)).toThrow(AttestationError);
  });

  it('challenge proof binds the connection to the quoted enclave key', () => {
    const ch = newChallenge();
    const proof = proveEnclaveKey(enclave.privateKey, ch);
    expect(() => checkEnclaveProof(enclave.publicKey, ch, proof)).not.toThrow();
    expect(() => checkEnclaveProof(enclave.publicKey, newChallenge(), proof)).toThrow(/replayed quote/);
    const impostor = proveEnclaveKey(generateEd25519().privateKey, ch);
    expect(() => checkEnclaveProof(enclave.publicKey, ch, impostor)).toThrow(AttestationError);
  });
});

describe('key files', () => {
  it('writes 0600 and reads back; refuses loose modes and wrong types', () => {
    const dir = mkdtempSync(join(tmpdir(), 'keys-'));
    const p = join(dir, 'node1.key.json');
    const k = generateX25519();
    writeKeyFile(p, k, 'x25519');
    expect(statSync(p).mode & 0o777).toBe(0o600);
    const back = readKeyFile(p, 'x25519');
    expect(Buffer.from(back.privateKey).equals(k.privateKey)).toBe(true);
    expect(Buffer.from(back.publicKey).equals(k.publicKey)).toBe(true);
    expect(() => readKeyFile(p, 'ed25519')).toThrow(/type x25519/);
    chmodSync(p, 0o644);
    expect(() => readKeyFile(p, 'x25519')).toThrow(/mode 644/);
    const untyped = join(dir, 'platform.json');
    writeKeyFile(untyped, k);
    expect(Buffer.from(readKeyFile(untyped).publicKey).equals(k.publicKey)).toBe(true);
    const pub = join(dir, 'node1.pub.json');
    writePublicKeyFile(pub, k.publicKey, 'x25519');
    expect(Buffer.from(readPublicKeyFile(pub, 'x25519')).equals(k.publicKey)).toBe(true);
  });
});
