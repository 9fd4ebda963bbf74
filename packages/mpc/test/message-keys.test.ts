import { describe, expect, it } from 'vitest';
import { Msg, decode, encodeWith } from '../src/messages';

describe('message keys (cached encodings)', () => {
  it('every key comes back as sent, past the caches, with keys of one length differing in one byte', () => {
    const keys: string[] = [];
    for (let i = 0; i < 300; i++) keys.push(`job:${String(i % 97).padStart(3, '0')}:${i % 7}`, `prep-${i}`, 'é' + String(i % 5));
    keys.push('');
    for (const key of keys) {
      const env = decode(encodeWith({ type: Msg.JobRound, key, a: 3, vectors: [new Uint8Array(16)] }, 1, 2));
      expect(env.key).toBe(key);
    }
  });

  it('a cached key does not alias the received buffer', () => {
    const bytes = encodeWith({ type: Msg.JobRound, key: 'job:abc' }, 0, 0);
    expect(decode(bytes).key).toBe('job:abc');
    // the receiver's buffer is rewritten in place (a cache holding a view would now see job:xbc)
    bytes[bytes.indexOf('a'.charCodeAt(0))] = 'x'.charCodeAt(0);
    expect(decode(bytes).key).toBe('job:xbc');
    expect(decode(encodeWith({ type: Msg.JobRound, key: 'job:abc' }, 0, 0)).key).toBe('job:abc');
  });
});
