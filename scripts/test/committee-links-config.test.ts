// The committee links' flag (`npm start -- --links tcp|unix`, docs/decisions/0041-unix-socket-links.md)
// and the addresses the launcher writes into the node configs. No process starts.
import { describe, it, expect } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { applyCommitteeLinks, ensureCluster, nodeSocketPath } from '../src/cluster';
import { startOptions } from '../src/start-options';
import { COMMITTEE_LINKS, DEFAULT_COMMITTEE_LINKS, committeeLinksOf, layout, readJson, type NodeConfig } from '@tenebra/config';
import { MAX_UNIX_SOCKET_PATH_BYTES, unixSocketPathOf } from '@tenebra/transport';

const folder = (): string => mkdtempSync(join(tmpdir(), 'tenebra-links-'));
const ports = { gateway: 33080, gatewayInternal: 33200, sequencer: 33100, nodeBase: 33001 };

describe('the committee links flag', () => {
  it('is read by npm start and the benches, tcp or unix, with a clear error otherwise', () => {
    expect(COMMITTEE_LINKS).toEqual(['tcp', 'unix']);
    expect(committeeLinksOf(undefined)).toBeUndefined();
    expect(committeeLinksOf('unix')).toBe('unix');
    expect(() => committeeLinksOf('udp')).toThrow(/--links must be one of tcp, unix, got 'udp'/);
    const o = startOptions(['--links', 'unix', '--data', '/tmp/x']);
    expect(o.help === false && o.options.links).toBe('unix');
    const none = startOptions(['--data', '/tmp/x']);
    expect(none.help === false && none.options.links).toBeUndefined();
    expect(() => startOptions(['--links', 'pipes'])).toThrow(/--links must be one of tcp, unix, got 'pipes'/);
  });
});

describe('the committee links in the node configs', () => {
  it('unix: every node listens on its socket under DIR/sockets and dials the others there; the next start switches back to TCP', async () => {
    const dir = folder();
    try {
      const onDisk = (i: number): NodeConfig => readJson<NodeConfig>(layout(dir).nodeConfig(i));
      const c = await ensureCluster({ dataDir: dir, env: 'test', ports, links: 'unix' });
      for (const nd of c.nodes) {
        const disk = onDisk(nd.index);
        expect(unixSocketPathOf(disk.listen)).toBe(join(layout(dir).root, 'sockets', `node-${nd.index}.sock`));
        expect(disk.peers.map((p) => unixSocketPathOf(p.addr))).toEqual([1, 2, 3, 4, 5].map((k) => join(layout(dir).root, 'sockets', `node-${k}.sock`)));
        // each dial address names the peer it reaches
        expect(disk.peers.every((p) => p.addr.endsWith(`/p2p/${p.peerId}`))).toBe(true);
      }
      const ids = c.nodes[0]!.peers.map((p) => p.peerId);
      // absent: the default, which is TCP on the ports planned for the nodes
      expect(DEFAULT_COMMITTEE_LINKS).toBe('tcp');
      await ensureCluster({ dataDir: dir, env: 'test' });
      for (const nd of c.nodes) {
        const disk = onDisk(nd.index);
        expect(disk.listen).toBe(`/ip4/127.0.0.1/tcp/${33000 + nd.index}`);
        expect(disk.peers.map((p) => p.addr)).toEqual(ids.map((id, k) => `/ip4/127.0.0.1/tcp/${33001 + k}/p2p/${id}`));
      }
      // and to unix again; the identities never change
      const again = await ensureCluster({ dataDir: dir, env: 'test', links: 'unix' });
      expect(again.nodes[2]!.peers.map((p) => p.peerId)).toEqual(ids);
      expect(onDisk(3).listen).toBe(c.nodes[2]!.listen);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a data folder too deep for the 107-byte socket path gets a short folder under the temporary directory, the same at every start', () => {
    const deep = join(tmpdir(), 'd'.repeat(90));
    const p1 = nodeSocketPath(deep, 1);
    expect(Buffer.byteLength(join(layout(deep).root, 'sockets', 'node-1.sock'))).toBeGreaterThan(MAX_UNIX_SOCKET_PATH_BYTES);
    expect(Buffer.byteLength(p1)).toBeLessThanOrEqual(MAX_UNIX_SOCKET_PATH_BYTES);
    expect(p1).toMatch(new RegExp(`^${tmpdir()}/tenebra-[0-9a-f]{16}/node-1\\.sock$`));
    expect(nodeSocketPath(deep, 1)).toBe(p1);
    expect(nodeSocketPath(deep, 2)).toBe(p1.replace('node-1', 'node-2'));
    expect(nodeSocketPath(`${deep}x`, 1)).not.toBe(p1); // another folder, another short folder
    // a short folder keeps its sockets inside
    expect(nodeSocketPath('/tmp/short', 4)).toBe('/tmp/short/sockets/node-4.sock');
  });

  it('rewrites only what differs, and names the configs it changed', async () => {
    const dir = folder();
    try {
      const c = await ensureCluster({ dataDir: dir, env: 'test', ports });
      expect(applyCommitteeLinks(dir, c.nodes, 'tcp')).toEqual([]);
      expect(applyCommitteeLinks(dir, c.nodes, 'unix')).toEqual([1, 2, 3, 4, 5]);
      expect(applyCommitteeLinks(dir, c.nodes, 'unix')).toEqual([]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
