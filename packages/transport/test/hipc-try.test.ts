import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { createLibp2pTransport, generateIdentity, type PeerEntry } from '../src/index';
import { pattern, waitFor } from './helpers';

it('unix try', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'hipc-'));
  const ids = await Promise.all([1, 2, 3].map(() => generateIdentity()));
  const peers: PeerEntry[] = ids.map((id, k) => ({ index: k + 1, peerId: id.peerId, addr: `/unix/${encodeURIComponent(join(dir, `n${k + 1}.sock`))}` }));
  const got: number[] = [0, 0, 0];
  const ts = await Promise.all([1, 2, 3].map((i) => createLibp2pTransport({ self: i, n: 3, privateKey: ids[i - 1]!.privateKey, listen: peers[i - 1]!.addr, peers })));
  ts.forEach((t, k) => t.onMessage(() => got[k]!++));
  await Promise.all(ts.map((t) => t.start()));
  console.log(ts[0]!.listenAddrs());
  for (const t of ts) for (let j = 1; j <= 3; j++) if (j !== t.self) { t.send(j, pattern(t.self, j, 100)); t.send(j, pattern(t.self, j, 200_000)); }
  await waitFor(() => got.every((g) => g === 4), 'all');
  console.log(ts[0]!.peerStats(2));
  await Promise.all(ts.map((t) => t.stop()));
  expect(got).toEqual([4, 4, 4]);
});
