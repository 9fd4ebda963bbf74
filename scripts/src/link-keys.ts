// Link keys (docs/decisions/0003-internal-authentication.md): one Ed25519 key per committee node and
// one for the gateway, each in its own key file under DIR/keys. A node's key proves it to the
// gateway's results listener and to the sequencer's feed; the gateway's proves it to the sequencer
// and to the nodes (results link).
// The key files are the source of truth: the public halves in the gateway's and the sequencer's
// configs are derived from them at every start, which also upgrades data folders made before link
// keys existed.
import { existsSync } from 'node:fs';
import type { GatewayConfig, NodeConfig, SequencerConfig, ClientLinkKeys, layout } from '@tenebra/config';
import { generateEd25519, readKeyFile, toHex, writeKeyFile } from '@tenebra/seal';

type Layout = ReturnType<typeof layout>;

/** The public key (hex) of the link key in `file`, creating the key first if the file is missing. */
export function ensureLinkKeyFile(file: string): string {
  if (!existsSync(file)) writeKeyFile(file, generateEd25519(), 'ed25519');
  return toHex(readKeyFile(file, 'ed25519').publicKey);
}

/** The sequencer's admission list from the public link keys. */
export function clientLinkKeys(gateway: string, nodes: Map<number, string>): ClientLinkKeys {
  return { gateway, nodes: [...nodes].map(([index, publicKey]) => ({ index, publicKey })) };
}

/**
 * Gives every process of an existing cluster its link key and the others' public keys, creating
 * what is missing. Mutates the configs; returns which ones changed (the caller writes them).
 */
export function upgradeLinkKeys(
  L: Layout, nodes: NodeConfig[], sequencer: SequencerConfig, gateway: GatewayConfig,
): { nodes: NodeConfig[]; sequencer: boolean; gateway: boolean } {
  const changedNodes: NodeConfig[] = [];
  const nodeKeys = new Map<number, string>();
  for (const nd of nodes) {
    const file = nd.linkKeyFile || L.nodeLinkKey(nd.index);
    nodeKeys.set(nd.index, ensureLinkKeyFile(file));
    if (nd.linkKeyFile !== file) {
      nd.linkKeyFile = file;
      changedNodes.push(nd);
    }
  }
  let gatewayChanged = false;
  const gatewayFile = gateway.linkKeyFile || L.gatewayLinkKey;
  const gatewayKey = ensureLinkKeyFile(gatewayFile);
  if (gateway.linkKeyFile !== gatewayFile) {
    gateway.linkKeyFile = gatewayFile;
    gatewayChanged = true;
  }
  for (const nd of gateway.nodes) {
    const key = nodeKeys.get(nd.index);
    if (key === undefined) throw new Error(`gateway config lists node ${nd.index}, which has no node config`);
    if (nd.linkPublicKey !== key) {
      nd.linkPublicKey = key;
      gatewayChanged = true;
    }
  }
  for (const nd of nodes) {
    if (nd.gatewayLinkPublicKey !== gatewayKey) {
      nd.gatewayLinkPublicKey = gatewayKey;
      if (!changedNodes.includes(nd)) changedNodes.push(nd);
    }
  }
  const admitted = clientLinkKeys(gatewayKey, nodeKeys);
  const sequencerChanged = JSON.stringify(sequencer.clientLinkKeys) !== JSON.stringify(admitted);
  if (sequencerChanged) sequencer.clientLinkKeys = admitted;
  return { nodes: changedNodes, sequencer: sequencerChanged, gateway: gatewayChanged };
}
