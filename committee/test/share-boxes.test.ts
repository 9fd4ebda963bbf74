// A node opens its share of a sequenced op only from a pair box that the gateway made for it: an
// anonymous box, which anyone holding the node's public key can make (the sequencer too), is refused.
import { describe, expect, it } from 'vitest';
import { pino } from 'pino';
import { encodeFieldVector } from '@tenebra/mpc';
import { generateX25519, PairBox, seal } from '@tenebra/seal';
import { opAad, type SequencedFrame } from '@tenebra/wire';
import { BatchApplier } from '../src/apply';

describe('share boxes at a node', () => {
  const gw = generateX25519();
  const node = generateX25519();
  const applier = new BatchApplier({ index: 1, n: 5, sealKey: node, gatewayPublicKey: gw.publicKey, log: pino({ level: 'silent' }) });
  const frame = (sealed: Uint8Array): SequencedFrame => ({
    t: 'op', seq: '7', ts_ns: '1', kind: 'place', symbol: 'ETH-USDC-PERP', pub: { order_id: 'o7', side: 'buy' }, sealed: Buffer.from(sealed).toString('base64'), batch_end: true,
  });
  const aad = opAad('place', 'o7', 'ETH-USDC-PERP');
  const shares = encodeFieldVector([11n, 22n, 33n, 0n]);

  it('opens the gateway\'s pair box', () => {
    expect(applier.decode(frame(new PairBox(gw.privateKey, node.publicKey).seal(shares, aad))).shares).toEqual([11n, 22n, 33n, 0n]);
  });

  it('refuses an anonymous box to the node, and a pair box made for another op', () => {
    expect(() => applier.decode(frame(seal(node.publicKey, shares, aad)))).toThrow(/seq 7: cannot unseal this node's share.*not a pair box from the gateway/);
    const other = new PairBox(gw.privateKey, node.publicKey).seal(shares, opAad('place', 'o8', 'ETH-USDC-PERP'));
    expect(() => applier.decode(frame(other))).toThrow(/not a pair box from the gateway/);
  });
});
