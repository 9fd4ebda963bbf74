// ensureCluster gives every process a link key and every server the clients' public keys, also in a
// data folder made before link keys existed (no processes are started here).
import { afterAll, describe, expect, it } from 'vitest';
import { mkdtempSync, readFileSync, rmSync, statSync, unlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { layout, readJson, writeJson, type GatewayConfig, type NodeConfig, type SequencerConfig } from '@tenebra/config';
import { readKeyFile, toHex } from '@tenebra/seal';
import { expectedMeasurement } from '@tenebra/sequencer-enclave';
import { ensureCluster } from '../src/cluster';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function fresh(): string {
  const d = mkdtempSync(join(tmpdir(), 'tenebra-linkkeys-'));
  dirs.push(d);
  return d;
}

/** Every public key in the configs matches its key file, and the measurement covers the admission list. */
function expectConsistent(dir: string): void {
  const L = layout(dir);
  const seq = readJson<SequencerConfig>(L.sequencerConfig);
  const gw = readJson<GatewayConfig>(L.gatewayConfig);
  const gwKey = toHex(readKeyFile(gw.linkKeyFile, 'ed25519').publicKey);
  expect(seq.clientLinkKeys.gateway).toBe(gwKey);
  expect(statSync(gw.linkKeyFile).mode & 0o777).toBe(0o600);
  for (const entry of gw.nodes) {
    const nd = readJson<NodeConfig>(L.nodeConfig(entry.index));
    const key = toHex(readKeyFile(nd.linkKeyFile, 'ed25519').publicKey);
    expect(entry.linkPublicKey).toBe(key);
    expect(seq.clientLinkKeys.nodes.find((x) => x.index === entry.index)?.publicKey).toBe(key);
    expect(nd.expectedMeasurement).toBe(expectedMeasurement(seq));
    expect(nd.gatewayLinkPublicKey).toBe(gwKey);
  }
  expect(new Set([gwKey, ...gw.nodes.map((x) => x.linkPublicKey)]).size).toBe(gw.nodes.length + 1);
  expect(gw.expectedMeasurement).toBe(expectedMeasurement(seq));
}

describe('link keys in the cluster config', () => {
  it('a fresh folder gets a distinct link key per node and for the gateway', async () => {
    const dir = fresh();
    await ensureCluster({ dataDir: dir, env: 'test' });
    expectConsistent(dir);
  });

  it('a folder from before link keys is upgraded on the next start, keeping its other keys; then nothing changes', async () => {
    const dir = fresh();
    const L = layout(dir);
    await ensureCluster({ dataDir: dir, env: 'test' });
    // Make it look like a folder written before this change: no link key files, no link fields.
    const seq = readJson<Partial<SequencerConfig>>(L.sequencerConfig);
    delete seq.clientLinkKeys;
    writeJson(L.sequencerConfig, seq);
    const gw = readJson<GatewayConfig>(L.gatewayConfig);
    unlinkSync(gw.linkKeyFile);
    delete (gw as Partial<GatewayConfig>).linkKeyFile;
    for (const nd of gw.nodes) delete (nd as { linkPublicKey?: string }).linkPublicKey;
    writeJson(L.gatewayConfig, gw);
    for (const { index } of gw.nodes) {
      const nd = readJson<NodeConfig>(L.nodeConfig(index));
      unlinkSync(nd.linkKeyFile);
      delete (nd as Partial<NodeConfig>).linkKeyFile;
      delete (nd as Partial<NodeConfig>).gatewayLinkPublicKey;
      writeJson(L.nodeConfig(index), nd);
    }
    const sealKeyBefore = readFileSync(L.nodeX25519Key(1), 'utf8');
    const libp2pBefore = readFileSync(L.nodeLibp2pKey(1), 'utf8');

    const { nodes, gateway, sequencer } = await ensureCluster({ dataDir: dir, env: 'test' });
    expectConsistent(dir);
    expect(nodes[0]!.linkKeyFile).toBe(L.nodeLinkKey(1));
    expect(gateway.linkKeyFile).toBe(L.gatewayLinkKey);
    expect(sequencer.clientLinkKeys.nodes).toHaveLength(5);
    expect(readFileSync(L.nodeX25519Key(1), 'utf8')).toBe(sealKeyBefore);
    expect(readFileSync(L.nodeLibp2pKey(1), 'utf8')).toBe(libp2pBefore);

    const files = [L.sequencerConfig, L.gatewayConfig, L.nodeConfig(1), L.nodeConfig(5)];
    const before = files.map((f) => readFileSync(f, 'utf8'));
    await ensureCluster({ dataDir: dir, env: 'test' });
    expect(files.map((f) => readFileSync(f, 'utf8'))).toEqual(before);
  });
});
