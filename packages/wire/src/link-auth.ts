// Who is on the other end of an internal link (docs/decisions/0003-internal-authentication.md).
// The server sends each connection a fresh random nonce; the client answers with its Ed25519 link
// key's signature over a context string, the link's purpose, its claimed identity, its key, that
// nonce and the server it believes it talks to. The server accepts only the key the cluster config
// registers for that identity, only the purpose that identity may use there, and only the nonce it
// issued on this very connection, once. Plain signatures, no TLS: see the ADR for what that leaves.
import type WebSocket from 'ws';
import { ed25519PublicKey, fromHex, newChallenge, sign, toHex, utf8, verify } from '@tenebra/seal';
import { encodeFrame } from './codec';
import type {
  AuthChallengeFrame, AuthFrame, AuthRefusedFrame, LinkPurpose, LinkRole, ResultHelloFrame,
} from './messages';

/** Domain separation: these signatures can never be mistaken for quotes, enclave proofs or libp2p's. */
export const LINK_AUTH_CONTEXT = 'tenebra-link-auth-v1';
/** WebSocket close code for a refused authentication (policy violation). */
export const CLOSE_AUTH_REFUSED = 1008;
/** WebSocket close code for an authenticated session replaced by a newer one of the same identity. */
export const CLOSE_SUPERSEDED = 4001;

/** Why a link was refused. Sent in AuthRefusedFrame.code and carried by LinkAuthError. */
export type LinkAuthCode =
  | 'AUTH_REQUIRED' // a frame other than the proof came before the proof
  | 'MALFORMED_AUTH' // the proof frame does not parse
  | 'NOT_ALLOWED' // this identity may not open this link, or asked for something its role may not do
  | 'WRONG_PURPOSE' // signed for another link
  | 'REPLAYED_CHALLENGE' // signed a nonce this connection did not issue, or a second proof
  | 'UNKNOWN_KEY' // the key is not the one the cluster config registers for the claimed identity
  | 'BAD_SIGNATURE' // the registered key did not sign this
  | 'AUTH_TIMEOUT' // no proof in time
  | 'NO_LINK_KEY'; // client side: the server asks for a proof and we have no key

/** A link refused for a stated reason (server side: the proof; client side: the server's refusal). */
export class LinkAuthError extends Error {
  override name = 'LinkAuthError';
  constructor(
    readonly code: LinkAuthCode,
    message: string,
  ) {
    super(`${code}: ${message}`);
  }
}

/** What a client proves: everything here but `sig` is covered by `sig`. */
export interface LinkClaim {
  role: LinkRole;
  id: number;
  purpose: LinkPurpose;
  /** hex Ed25519 public key */
  key: string;
  /** hex nonce the server issued */
  nonce: string;
  /** hex Ed25519 signature over linkAuthMessage(claim, server) */
  sig: string;
}

/** The private half of a client's link identity. */
export interface LinkIdentity {
  role: LinkRole;
  /** node index, 0 for the gateway */
  id: number;
  /** 32-byte Ed25519 seed (a key file written by writeKeyFile) */
  privateKey: Uint8Array;
}

/** `node:3`, `gateway:0`: how logs and messages name an identity. */
export const principalName = (role: LinkRole, id: number): string => `${role}:${id}`;

/** The exact bytes a client signs. `server` names the server the client verified (see callers). */
export function linkAuthMessage(claim: Omit<LinkClaim, 'sig'>, server: string): Uint8Array {
  return utf8(
    [LINK_AUTH_CONTEXT, `purpose=${claim.purpose}`, `peer=${principalName(claim.role, claim.id)}`,
      `key=${claim.key}`, `nonce=${claim.nonce}`, `server=${server}`].join('\n'),
  );
}

/** Client side: the signed claim answering `nonce` for `purpose` on the link to `server`. */
export function signLinkAuth(identity: LinkIdentity, purpose: LinkPurpose, nonce: string, server: string): LinkClaim {
  const unsigned = { role: identity.role, id: identity.id, purpose, key: toHex(ed25519PublicKey(identity.privateKey)), nonce };
  return { ...unsigned, sig: toHex(sign(identity.privateKey, linkAuthMessage(unsigned, server))) };
}

/** The sequencer link's proof frame. */
export function authFrame(c: LinkClaim): AuthFrame {
  return { t: 'auth', role: c.role, id: c.id, purpose: c.purpose, key: c.key, nonce: c.nonce, sig: c.sig };
}

/**
 * The results link's hello: node `nodeKey`'s proof for the gateway's `nonce`, and `challenge`, the
 * node's own nonce for the gateway's proof (default: a fresh one; keep it to check the resume).
 */
export function resultsHello(node: number, nodeKey: Uint8Array, nonce: string, challenge: string = newChallenge()): ResultHelloFrame {
  const c = signLinkAuth({ role: 'node', id: node, privateKey: nodeKey }, 'results', nonce, RESULTS_SERVER);
  return { t: 'hello', node, purpose: c.purpose, key: c.key, nonce: c.nonce, sig: c.sig, challenge };
}

/** The gateway's side of the results link: its proof over node `node`'s hello challenge. */
export function gatewayResultsProof(gatewayKey: Uint8Array, node: number, challenge: string): { key: string; sig: string } {
  const c = signLinkAuth({ role: 'gateway', id: 0, privateKey: gatewayKey }, 'results', challenge, principalName('node', node));
  return { key: c.key, sig: c.sig };
}

/** Node side: throws LinkAuthError unless `proof` is the gateway's link key signing our hello challenge. */
export function checkGatewayResultsProof(
  gatewayPublicKey: Uint8Array, node: number, challenge: string, proof: { key: string; sig: string },
): void {
  const keys = new LinkKeyDirectory([{ role: 'gateway', id: 0, publicKey: gatewayPublicKey }]);
  // Our own challenge, checked with the same rules as a server checks a client.
  const ours = new ConnectionChallenge(keys, { gateway: 'results' }, principalName('node', node), challenge);
  ours.verify({ role: 'gateway', id: 0, purpose: 'results', key: proof.key, nonce: challenge, sig: proof.sig });
}

/** The claim a results hello makes. */
export function claimOfHello(h: ResultHelloFrame): LinkClaim {
  return { role: 'node', id: h.node, purpose: h.purpose, key: h.key, nonce: h.nonce, sig: h.sig };
}

/** The claim an auth frame makes. */
export function claimOfAuth(a: AuthFrame): LinkClaim {
  return { role: a.role, id: a.id, purpose: a.purpose, key: a.key, nonce: a.nonce, sig: a.sig };
}

/** The `server` a node's results hello names (the gateway proves itself after it, in its resume). */
export const RESULTS_SERVER = 'gateway-results';
/** The `server` the sequencer link's proofs name: the enclave key the client just verified. */
export const sequencerServerName = (enclavePubkeyHex: string): string => `enclave:${enclavePubkeyHex}`;

/** The link keys a server accepts, from the cluster config. */
export class LinkKeyDirectory {
  private readonly byPrincipal = new Map<string, string>();
  private readonly byKey = new Map<string, string>();

  constructor(entries: { role: LinkRole; id: number; publicKey: Uint8Array | string }[]) {
    for (const e of entries) {
      const key = typeof e.publicKey === 'string' ? e.publicKey.toLowerCase() : toHex(e.publicKey);
      if (!/^[0-9a-f]{64}$/.test(key)) throw new TypeError(`link key of ${principalName(e.role, e.id)} must be 32 bytes (64 hex chars)`);
      const who = principalName(e.role, e.id);
      if (this.byKey.has(key)) throw new TypeError(`${who} and ${this.byKey.get(key)} share one link key`);
      this.byPrincipal.set(who, key);
      this.byKey.set(key, who);
    }
  }

  /** The registered key (hex) of an identity, if any. */
  keyOf(role: LinkRole, id: number): string | undefined {
    return this.byPrincipal.get(principalName(role, id));
  }

  /** Whose key this is (for log messages), if anyone's. */
  ownerOf(keyHex: string): string | undefined {
    return this.byKey.get(keyHex);
  }
}

/** Which purpose each role may use on one server's links (a role absent here may not connect). */
export type LinkPolicy = Partial<Record<LinkRole, LinkPurpose>>;

/** One connection's challenge: a fresh nonce, spent by the first proof checked against it. */
export class ConnectionChallenge {
  private spent = false;

  constructor(
    private readonly keys: LinkKeyDirectory,
    private readonly policy: LinkPolicy,
    /** the `server` the client must have signed for */
    private readonly server: string,
    /** the nonce sent (fresh unless the caller already sent its own) */
    readonly nonce: string = newChallenge(),
  ) {}

  get frame(): AuthChallengeFrame {
    return { t: 'auth_challenge', nonce: this.nonce };
  }

  /** Checks a proof; returns who it proves. Throws LinkAuthError (the challenge is spent either way). */
  verify(c: LinkClaim): { role: LinkRole; id: number } {
    if (this.spent) throw new LinkAuthError('REPLAYED_CHALLENGE', 'this connection already presented a proof');
    this.spent = true;
    const who = principalName(c.role, c.id);
    const allowed = this.policy[c.role];
    if (!allowed) throw new LinkAuthError('NOT_ALLOWED', `a ${c.role} may not open this link`);
    if (c.purpose !== allowed) {
      throw new LinkAuthError('WRONG_PURPOSE', `${who} signed for '${c.purpose}'; this link is '${allowed}'`);
    }
    if (c.nonce !== this.nonce) {
      throw new LinkAuthError('REPLAYED_CHALLENGE', `${who} signed a nonce this connection did not issue (a replayed proof?)`);
    }
    const registered = this.keys.keyOf(c.role, c.id);
    if (registered === undefined) throw new LinkAuthError('UNKNOWN_KEY', `${who} has no registered link key`);
    if (registered !== c.key) {
      const owner = this.keys.ownerOf(c.key);
      throw new LinkAuthError('UNKNOWN_KEY', `key ${c.key.slice(0, 16)}… is not ${who}'s link key${owner ? ` (it is ${owner}'s)` : ''}`);
    }
    if (!verify(fromHex(registered), linkAuthMessage(c, this.server), fromHex(c.sig))) {
      throw new LinkAuthError('BAD_SIGNATURE', `the signature does not verify under ${who}'s link key`);
    }
    return { role: c.role, id: c.id };
  }
}

/** Server side: tells the client why it is refused, then closes (it may still be mid-handshake). */
export function refuseLink(ws: WebSocket, err: LinkAuthError): void {
  if (ws.readyState === ws.OPEN) {
    ws.send(encodeFrame({ t: 'auth_refused', code: err.code, message: err.message } satisfies AuthRefusedFrame));
    ws.close(CLOSE_AUTH_REFUSED, err.code);
  } else {
    ws.terminate();
  }
}
