// The link-key proof on its own: what it binds, and how the server-side check refuses each forgery.
import { describe, expect, it } from 'vitest';
import { generateEd25519, toHex } from '@tenebra/seal';
import {
  ConnectionChallenge, LinkAuthError, LinkKeyDirectory, claimOfHello, resultsHello, sequencerServerName, signLinkAuth,
  type LinkClaim, type LinkPolicy,
} from '../src/index';

const gateway = generateEd25519();
const node1 = generateEd25519();
const keys = new LinkKeyDirectory([
  { role: 'gateway', id: 0, publicKey: gateway.publicKey },
  { role: 'node', id: 1, publicKey: toHex(node1.publicKey) },
]);
const policy: LinkPolicy = { gateway: 'submit', node: 'feed' };
const server = sequencerServerName('ab'.repeat(32));

/** The code verify() refuses `claim` with on a fresh challenge (made by `make` from its nonce). */
function refusal(make: (nonce: string) => LinkClaim, serverName = server): string {
  const ch = new ConnectionChallenge(keys, policy, serverName);
  try {
    ch.verify(make(ch.nonce));
  } catch (e) {
    expect(e).toBeInstanceOf(LinkAuthError);
    return (e as LinkAuthError).code;
  }
  return 'ACCEPTED';
}

describe('link authentication', () => {
  it('accepts each identity for its own purpose, once per connection', () => {
    const ch = new ConnectionChallenge(keys, policy, server);
    expect(ch.frame).toEqual({ t: 'auth_challenge', nonce: ch.nonce });
    const claim = signLinkAuth({ role: 'node', id: 1, privateKey: node1.privateKey }, 'feed', ch.nonce, server);
    expect(ch.verify(claim)).toEqual({ role: 'node', id: 1 });
    expect(() => ch.verify(claim)).toThrow(/REPLAYED_CHALLENGE/);
    expect(refusal((n) => signLinkAuth({ role: 'gateway', id: 0, privateKey: gateway.privateKey }, 'submit', n, server))).toBe('ACCEPTED');
  });

  it('refuses what is not exactly the registered key signing this nonce for this link and server', () => {
    const asNode1 = (privateKey: Uint8Array, purpose: 'feed' | 'results' = 'feed', srv = server) => (n: string) =>
      signLinkAuth({ role: 'node', id: 1, privateKey }, purpose, n, srv);
    expect(refusal(asNode1(generateEd25519().privateKey))).toBe('UNKNOWN_KEY');
    expect(refusal((n) => signLinkAuth({ role: 'node', id: 2, privateKey: node1.privateKey }, 'feed', n, server))).toBe('UNKNOWN_KEY');
    expect(refusal(asNode1(node1.privateKey, 'results'))).toBe('WRONG_PURPOSE');
    expect(refusal(() => signLinkAuth({ role: 'node', id: 1, privateKey: node1.privateKey }, 'feed', 'cd'.repeat(32), server))).toBe('REPLAYED_CHALLENGE');
    // Signed for another enclave (relayed through an impostor), or tampered with after signing.
    expect(refusal(asNode1(node1.privateKey, 'feed', sequencerServerName('ef'.repeat(32))))).toBe('BAD_SIGNATURE');
    expect(refusal((n) => ({ ...asNode1(node1.privateKey)(n), purpose: 'feed', sig: '00'.repeat(64) }))).toBe('BAD_SIGNATURE');
    // A role with no purpose on this server.
    const resultsOnly = new ConnectionChallenge(keys, { node: 'results' }, server);
    expect(() => resultsOnly.verify(signLinkAuth({ role: 'gateway', id: 0, privateKey: gateway.privateKey }, 'results', resultsOnly.nonce, server)))
      .toThrow(/NOT_ALLOWED/);
  });

  it('a results hello is the same proof with role node and purpose results', () => {
    const ch = new ConnectionChallenge(keys, { node: 'results' }, 'gateway-results');
    expect(ch.verify(claimOfHello(resultsHello(1, node1.privateKey, ch.nonce)))).toEqual({ role: 'node', id: 1 });
  });

  it('the key directory refuses a key shared by two identities or of the wrong length', () => {
    expect(() => new LinkKeyDirectory([
      { role: 'node', id: 1, publicKey: node1.publicKey }, { role: 'node', id: 2, publicKey: node1.publicKey },
    ])).toThrow(/share one link key/);
    expect(() => new LinkKeyDirectory([{ role: 'node', id: 1, publicKey: 'abcd' }])).toThrow(/32 bytes/);
  });
});
