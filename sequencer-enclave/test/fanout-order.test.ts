// A durable op goes to the nodes' feeds in the turn it became durable, right behind its ack (ADR
// 0045): the fill an order waits for starts with the nodes' job. It was the next turn
// (setImmediate), behind whatever I/O that turn had queued.
import { afterAll, describe, expect, it } from 'vitest';
import { Sequencer } from '../src/sequencer';
import { cleanupDirs, opaqueOp, silent, tmp } from './helpers';

afterAll(cleanupDirs);

describe('fan-out before the ack', () => {
  it('the feeds hear of a durable op in the microtasks of its ack, not a turn later; a group commit is one notification', async () => {
    const s = Sequencer.open(tmp(), 5, silent, undefined, 'intake');
    const order: string[] = [];
    s.onDurable(() => order.push(`fanout up to ${s.lastSeq}`));
    const one = s.submit('r1', opaqueOp(5, 1)).then((a) => order.push(`ack ${a.t === 'ack' ? a.seq : a.t}`));
    await one; // the microtasks queued behind the ack's have run, no macrotask yet
    expect(order).toEqual(['ack 1', 'fanout up to 1']);
    order.length = 0;
    // three ops of one intake group: one fan-out for the group, with all three durable
    await Promise.all([2, 3, 4].map((k) => s.submit(`r${k}`, opaqueOp(5, k)).then((a) => order.push(`ack ${a.t === 'ack' ? a.seq : a.t}`))));
    expect(order.filter((x) => x.startsWith('fanout'))).toEqual(['fanout up to 4']);
    expect(order.filter((x) => x.startsWith('ack'))).toEqual(['ack 2', 'ack 3', 'ack 4']);
    await s.close();
  });
});
