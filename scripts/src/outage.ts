// What `npm start` says of the preprocessing reserve: its targets, the outage they cover at the
// per-order cost, a bound on its size on disk, and the time to fill it at the production rate a node
// measured in the folder's last run (docs/decisions/0016-outage-capacity.md).
import { closeSync, existsSync, fstatSync, openSync, readSync } from 'node:fs';
import { join } from 'node:path';
import { ORDER_PREP_COST, ordersCovered, reserveTargetsOf, RESERVE_KINDS, type NodeConfig, type OutageSizing, type ReserveCounts, type ReserveKind } from '@tenebra/config';
import { ELEMENT_BYTES, WIDTH } from '@tenebra/mpc';
import type { Flags } from './flags';

/** The value flags of outage sizing (outageSizingOf). */
export const OUTAGE_FLAGS = ['outage-minutes', 'outage-rate'];

export const OUTAGE_USAGE = `  --outage-minutes M --outage-rate R
               size every node's preprocessing reserve to keep trading M minutes at R orders a second
               with nodes down (production needs every node at n = 2t+1, 2t+1 of 7 at 7/2; matching any t+1), at ${ORDER_PREP_COST.bits} random bits,
               ${ORDER_PREP_COST.lex4} lex4, ${ORDER_PREP_COST.prod4} prod4 and ${ORDER_PREP_COST.triples} triple per order; kept on disk, refilled while all are up.
               Written into the node configs (new or resumed folder); absent: the configs' targets`;

/** Reads OUTAGE_FLAGS (both or neither); throws on a bad value. */
export function outageSizingOf(flags: Flags): OutageSizing | undefined {
  const m = flags.str.get('outage-minutes');
  const r = flags.str.get('outage-rate');
  if (m === undefined && r === undefined) return undefined;
  if (m === undefined || r === undefined) throw new Error('--outage-minutes and --outage-rate go together (e.g. --outage-minutes 10 --outage-rate 2)');
  const minutes = Number(m);
  const ratePerSecond = Number(r);
  if (m.trim() === '' || !Number.isFinite(minutes) || minutes <= 0) throw new Error(`--outage-minutes must be a positive number, got '${m}'`);
  if (r.trim() === '' || !Number.isFinite(ratePerSecond) || ratePerSecond <= 0) throw new Error(`--outage-rate must be a positive number, got '${r}'`);
  return { minutes, ratePerSecond };
}

/** Bytes one item of each kind takes in a node's store (field elements of 16 bytes; a random bit is a quarter of a nibble's 16 elements). */
export function itemBytes(): ReserveCounts {
  return { bits: (WIDTH.nibbles * ELEMENT_BYTES) / 4, lex4: WIDTH.lex4 * ELEMENT_BYTES, prod4: WIDTH.prod4 * ELEMENT_BYTES, triples: WIDTH.triples * ELEMENT_BYTES };
}

/**
 * A bound on one node's reserve on disk: the target of each kind, plus one production batch (a batch
 * that starts below target may end above it) and one more (a chunk is deleted only once wholly
 * consumed), each of at most `batch` items (in bits: 4 per nibble). Store overhead (lmdb pages, the
 * core state) comes on top.
 */
export function reserveDiskBound(targets: ReserveCounts, batch: number): { items: ReserveCounts; bytes: number } {
  const per = itemBytes();
  const items = {} as ReserveCounts;
  let bytes = 0;
  for (const k of RESERVE_KINDS) {
    items[k] = targets[k] + 2 * batch * (k === 'bits' ? 4 : 1);
    bytes += items[k] * per[k];
  }
  return { items, bytes };
}

/** Random bits a second node `index` made while producing, from its last status line in the folder's log (null when unknown). */
export function measuredBitsPerSecond(dataDir: string, index = 1): number | null {
  const file = join(dataDir, 'logs', `node-${index}.log`);
  if (!existsSync(file)) return null;
  const fd = openSync(file, 'r');
  try {
    const size = fstatSync(fd).size;
    const len = Math.min(size, 512 * 1024);
    const buf = Buffer.alloc(len);
    readSync(fd, buf, 0, len, size - len);
    const lines = buf.toString('utf8').split('\n').reverse();
    for (const line of lines) {
      if (!line.includes('"msg":"status"')) continue;
      try {
        const made = (JSON.parse(line) as { made?: { bits?: number; productionMs?: number } }).made;
        if (made?.bits && made.productionMs && made.productionMs >= 1_000) return (made.bits * 1000) / made.productionMs;
      } catch {
        // a line cut by the window: try an older one
      }
    }
    return null;
  } finally {
    closeSync(fd);
  }
}

const fmt = (x: number): string => Math.round(x).toLocaleString('en-US');
const mib = (b: number): string => `${(b / (1 << 20)).toFixed(1)} MiB`;

/** The lines `npm start` prints about the reserve of a node config. */
export function describeReserve(node: NodeConfig, sizing: OutageSizing | undefined, bitsPerSecond: number | null): string[] {
  const targets = reserveTargetsOf(node.preprocessing);
  const orders = ordersCovered(targets);
  const kinds = (c: ReserveCounts): string => RESERVE_KINDS.map((k: ReserveKind) => `${fmt(c[k])} ${k}`).join(', ');
  const batch = node.preprocessing.batch ?? 2048;
  const disk = reserveDiskBound(targets, batch);
  const out = [
    `preprocessing reserve per node: ${kinds(targets)}`,
    `  covers about ${fmt(orders)} orders with nodes down (at ${kinds(ORDER_PREP_COST)} per order; the nodes measure the real cost)${sizing ? `: ${sizing.minutes} min at ${sizing.ratePerSecond} orders/s asked` : ''}`,
    `  on disk at most ${mib(disk.bytes)} per node (${kinds(disk.items)} at ${kinds(itemBytes())} bytes each; store overhead on top)`,
  ];
  if (node.preprocessing.mode === 'dealer') out.push('  dealer mode: the dealer refills it whatever nodes are down');
  else if (bitsPerSecond) out.push(`  time to fill from empty: about ${fmt(targets.bits / bitsPerSecond)} s at the ${fmt(bitsPerSecond)} random bits/s node 1 made in its last run`);
  else out.push('  time to fill from empty: not measured on this folder yet (committee production alone made 39,000-78,000 random bits/s on a 2-core VM in bench:mpc with every node up, less while it matches; node status lines show it)');
  return out;
}
