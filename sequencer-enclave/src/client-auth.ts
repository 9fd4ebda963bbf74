// Who may use the sequencer: the gateway submits ops, each committee node reads its own feed. Each
// connection proves its identity by signing the connection's fresh nonce with its link key
// (@tenebra/wire link-auth). The keys come from config.clientLinkKeys, which is measured: the quote
// a client verifies also vouches for whom this enclave admits.
import type WebSocket from 'ws';
import type { SequencerConfig } from '@tenebra/config';
import { CLOSE_SUPERSEDED, LinkKeyDirectory, type LinkPolicy } from '@tenebra/wire';

/** The one purpose each role may use here. */
export const SEQUENCER_LINK_POLICY: LinkPolicy = { gateway: 'submit', node: 'feed' };

/** The directory of admitted link keys; throws if the config lacks or garbles them. */
export function clientKeyDirectory(config: SequencerConfig): LinkKeyDirectory {
  const k = config.clientLinkKeys as SequencerConfig['clientLinkKeys'] | undefined;
  if (!k || typeof k.gateway !== 'string' || !Array.isArray(k.nodes)) {
    throw new Error('sequencer config: clientLinkKeys {gateway, nodes[]} is required (npm start adds it to older data folders)');
  }
  for (const nd of k.nodes) {
    if (!Number.isInteger(nd.index) || nd.index < 1 || nd.index > config.n) {
      throw new Error(`sequencer config: clientLinkKeys.nodes index ${nd.index} is not in 1..${config.n}`);
    }
  }
  return new LinkKeyDirectory([
    { role: 'gateway', id: 0, publicKey: k.gateway },
    ...k.nodes.map((nd) => ({ role: 'node' as const, id: nd.index, publicKey: nd.publicKey })),
  ]);
}

/**
 * One live feed connection per node: the newest authenticated one wins and the older is closed.
 * Only the key holder can authenticate, so the newest is the node itself, typically back from a
 * restart while its old TCP connection is still half-open.
 */
export class NodeSessions {
  private readonly byNode = new Map<number, WebSocket>();

  /** Records ws as node's session; closes and returns the session it replaces, if any. */
  claim(node: number, ws: WebSocket): WebSocket | undefined {
    const prior = this.byNode.get(node);
    this.byNode.set(node, ws);
    if (!prior || prior === ws) return undefined;
    prior.close(CLOSE_SUPERSEDED, 'superseded by a newer authenticated session');
    return prior;
  }

  /** Forgets ws if it is still node's session. */
  release(node: number, ws: WebSocket): void {
    if (this.byNode.get(node) === ws) this.byNode.delete(node);
  }
}
