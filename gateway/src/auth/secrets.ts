// Slow hashes for api secrets and passphrases (scrypt, node:crypto), each with its own random salt.
// Stored form: scrypt$<N>$<r>$<p>$<salt base64url>$<hash base64url>, so parameters can change later.
import { randomBytes, scrypt as scryptCb, timingSafeEqual, type ScryptOptions } from 'node:crypto';

const KEY_LEN = 32;
const SALT_LEN = 16;
/** N = 2^14, r = 8, p = 1: about 16 MB and tens of milliseconds per hash (OWASP's scrypt floor is N=2^17 at p=1; we trade some strength for a 2-core CI). */
export const DEFAULT_SCRYPT = { N: 16384, r: 8, p: 1 } as const;

function scrypt(secret: string, salt: Buffer, opts: ScryptOptions): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    scryptCb(secret.normalize('NFKC'), salt, KEY_LEN, { ...opts, maxmem: 64 * 1024 * 1024 }, (err, key) => (err ? reject(err) : resolve(key)));
  });
}

/** The stored scrypt hash of secret with a fresh random salt. */
export async function hashSecret(secret: string, params: { N: number; r: number; p: number } = DEFAULT_SCRYPT): Promise<string> {
  const salt = randomBytes(SALT_LEN);
  const key = await scrypt(secret, salt, params);
  return `scrypt$${params.N}$${params.r}$${params.p}$${salt.toString('base64url')}$${key.toString('base64url')}`;
}

/** True iff secret matches the stored hash (constant-time compare); false for a malformed stored hash. */
export async function verifySecret(secret: string, stored: string): Promise<boolean> {
  const parts = stored.split('$');
  if (parts.length !== 6 || parts[0] !== 'scrypt') return false;
  const [N, r, p] = [Number(parts[1]), Number(parts[2]), Number(parts[3])];
  if (![N, r, p].every((x) => Number.isSafeInteger(x) && x > 0)) return false;
  const salt = Buffer.from(parts[4]!, 'base64url');
  const want = Buffer.from(parts[5]!, 'base64url');
  if (want.length !== KEY_LEN) return false;
  const got = await scrypt(secret, salt, { N, r, p });
  return timingSafeEqual(got, want);
}

/** A hash that never verifies, to spend the same time on unknown client ids as on known ones. */
export const DUMMY_HASH = `scrypt$${DEFAULT_SCRYPT.N}$${DEFAULT_SCRYPT.r}$${DEFAULT_SCRYPT.p}$${Buffer.alloc(SALT_LEN).toString('base64url')}$${Buffer.alloc(KEY_LEN, 1).toString('base64url')}`;

/** A random credential string with the given prefix (base64url of `bytes` random bytes). */
export function randomCredential(prefix: string, bytes: number): string {
  return `${prefix}${randomBytes(bytes).toString('base64url')}`;
}
