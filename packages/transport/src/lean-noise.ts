/**
 * Noise (@chainsafe/libp2p-noise 17) with two per-message costs removed. Both were measured in a
 * party's CPU profile of the single-comparison benchmark (one small MPC message per peer per round):
 *
 * 1. Two socket writes per message. Noise hands the TCP connection a list [2-byte length, ciphertext]
 *    and @libp2p/tcp writes each piece with its own `socket.write`; with TCP_NODELAY that is two
 *    syscalls and two segments per message (strace: ~2.2 writes per message). We join the pieces of
 *    each send into one buffer first: one write, one segment. The bytes on the wire are identical.
 * 2. A thrown RangeError per received chunk. Noise's length-prefix decoder learns that its buffer is
 *    drained by catching `RangeError('Could not decode int16BE')`, so every read builds an Error with
 *    a stack trace (~7% of a party's CPU). Our length reader returns 0 for fewer than 2 bytes, which
 *    the decoder reads as "a 2-byte frame is not complete yet" and stops the same way, without a throw,
 *    and reads the length's bytes directly from the list's first piece.
 *
 * 3. ChaCha20-Poly1305 from libsodium (sodium-native, ./sodium-cipher.ts, ADR 0042) for every
 *    message: one native call per message, 2-5x less CPU than either of the library's ciphers at an
 *    MPC round's sizes (a few hundred bytes to a few KB). The handshake's hash, HKDF and X25519 stay
 *    the library's. Where sodium-native cannot load, the library's ciphers with the switch at 640
 *    bytes (WebAssembly below, node:crypto from there: here the two cross near 600-700 bytes, against
 *    the library's 1,200), and `leanNoise` says so once in the log. The same cipher either way: same
 *    bytes on the wire.
 *
 * The first two hook instance fields of the library's classes. If a new version renames them, `leanNoise`
 * leaves that connection as the library made it (correct, just slower) and says so in the log once.
 */
import { noise } from '@chainsafe/libp2p-noise';
import { asCrypto, defaultCrypto, nodeCrypto } from '@chainsafe/libp2p-noise/crypto';
import { loadSodium, sodiumCipher, type ChaChaFns } from './sodium-cipher';

/** Without libsodium: messages (plaintext to encrypt, ciphertext to decrypt) of at least this many bytes go to node:crypto. */
export const NODE_CIPHER_FROM_BYTES = 640;

type NoiseCrypto = typeof defaultCrypto;

/**
 * The library's crypto with its transport cipher from libsodium (`cipher`, by default sodium-native's
 * when it loads); with `cipher` undefined, the library's ciphers with the WebAssembly / node:crypto
 * switch at `fromBytes`.
 */
export function leanCrypto(fromBytes = NODE_CIPHER_FROM_BYTES, cipher: ChaChaFns | undefined = sodiumCipher()): NoiseCrypto {
  if (cipher !== undefined) return { ...defaultCrypto, ...cipher };
  return {
    ...defaultCrypto,
    chaCha20Poly1305Encrypt(plaintext, nonce, ad, k) {
      return plaintext.byteLength < fromBytes ? asCrypto.chaCha20Poly1305Encrypt(plaintext, nonce, ad, k) : nodeCrypto.chaCha20Poly1305Encrypt(plaintext, nonce, ad, k);
    },
    chaCha20Poly1305Decrypt(ciphertext, nonce, ad, k, dst) {
      return ciphertext.byteLength < fromBytes ? asCrypto.chaCha20Poly1305Decrypt(ciphertext, nonce, ad, k, dst) : nodeCrypto.chaCha20Poly1305Decrypt(ciphertext, nonce, ad, k, dst);
    },
  };
}

type NoiseFactory = ReturnType<typeof noise>;
type Encrypter = ReturnType<NoiseFactory>;

interface ByteList { byteLength: number; bufs?: unknown[]; subarray(): Uint8Array }
interface SendsData { sendData?: (data: ByteList) => unknown }
interface DecodesFrames { decoder?: { lengthDecoder?: (buf: ByteList & { getUint16(i: number): number }) => number } }

/** Warns once per missing hook, so a library upgrade that breaks a hook is visible in the logs. */
function warnOnce(log: (msg: string) => void): (what: string) => void {
  const said = new Set<string>();
  return (what) => {
    if (said.has(what)) return;
    said.add(what);
    log(`lean noise: ${what} not found in this @chainsafe/libp2p-noise / @libp2p/tcp version; left as the library made it`);
  };
}

/** One socket write per send: joins a multi-piece list into one buffer of the same list class. */
export function coalesceWrites(connection: unknown): boolean {
  const c = connection as SendsData;
  const original = c.sendData;
  if (typeof original !== 'function') return false;
  c.sendData = function coalescedSendData(this: unknown, data: ByteList): unknown {
    if (Array.isArray(data.bufs) && data.bufs.length > 1) {
      const List = (data as object).constructor as new (...bufs: Uint8Array[]) => ByteList;
      data = new List(data.subarray());
    }
    return original.call(this, data);
  };
  return true;
}

/** Noise's frame-length reader without the throw on a drained buffer (see the header). */
export function quietLengthDecoder(encrypted: unknown): boolean {
  const d = (encrypted as DecodesFrames).decoder;
  if (d === undefined || typeof d.lengthDecoder !== 'function') return false;
  d.lengthDecoder = (buf) => {
    if (buf.byteLength < 2) return 0;
    // Read the two bytes from the list's first piece when it holds them: Uint8ArrayList.getUint16
    // finds the piece and builds a DataView per call (1.5% of a node's busy time, one per frame).
    const first = buf.bufs?.[0];
    return first instanceof Uint8Array && first.byteLength >= 2 ? (first[0]! << 8) | first[1]! : buf.getUint16(0);
  };
  return true;
}

/** `sodium`: sodium-native as loaded (tests pass a failed load to exercise the fallback). */
export function leanNoise(log: (msg: string) => void = () => {}, sodium: ReturnType<typeof loadSodium> = loadSodium()): NoiseFactory {
  if ('error' in sodium) log(`lean noise: sodium-native did not load (${sodium.error}); ChaCha20-Poly1305 from the library's WebAssembly / node:crypto ciphers, slower per message`);
  const make = noise({ crypto: leanCrypto(NODE_CIPHER_FROM_BYTES, 'sodium' in sodium ? sodiumCipher(sodium.sodium) : undefined) });
  const warn = warnOnce(log);
  return (components) => {
    const inner: Encrypter = make(components);
    const secureInbound = inner.secureInbound.bind(inner);
    const secureOutbound = inner.secureOutbound.bind(inner);
    const lean = <R extends { connection: unknown }>(result: R): R => {
      if (!quietLengthDecoder(result.connection)) warn('the frame decoder');
      return result;
    };
    inner.secureInbound = async (connection, options) => {
      if (!coalesceWrites(connection)) warn('the TCP sendData hook');
      return lean(await secureInbound(connection, options));
    };
    inner.secureOutbound = async (connection, options) => {
      if (!coalesceWrites(connection)) warn('the TCP sendData hook');
      return lean(await secureOutbound(connection, options));
    };
    return inner;
  };
}
