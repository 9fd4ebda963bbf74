import { describe, it, expect } from 'vitest';
import { parseExposition } from '@tenebra/metrics';
import { leakage, nodeTile, snapshot, STALE_MS, type ProcView } from '../src/snapshot';

const node = (lines: string[]) => parseExposition(lines.join('\n'));
const live = (extra: string[] = []) => node([
  'tenebra_node_quorum 1', 'tenebra_node_peer_up{peer="2"} 1', 'tenebra_node_peer_up{peer="3"} 0',
  'tenebra_node_peer_sent_bytes_total{peer="2"} 1000', 'tenebra_node_rounds_total 50',
  'tenebra_node_reserve_items{kind="bits"} 4000', 'tenebra_node_reserve_items{kind="lex4"} 300',
  'tenebra_node_reserve_items{kind="prod4"} 90', 'tenebra_node_reserve_items{kind="triples"} 200',
  'tenebra_node_reserve_ops_left 120', 'tenebra_node_party_events_total{event="recovered"} 0', ...extra,
]);
const view = (over: Partial<ProcView>, times: number[], samples: ReturnType<typeof node>[]): ProcView => ({
  role: 'committee', index: 1, pid: 42, running: true, frozen: false, scrapes: { times, samples }, ...over,
});

describe('node tiles', () => {
  const now = 1_000_000;
  it('read rates per peer link, the reserve and what it covers', () => {
    const later = live().map((s) => (s.name === 'tenebra_node_peer_sent_bytes_total' ? { ...s, value: 3000 } : s.name === 'tenebra_node_rounds_total' ? { ...s, value: 70 } : s));
    const t = nodeTile(view({}, [now - 1000, now], [live(), later]), 3, now);
    expect(t.state).toBe('up');
    expect(t.peers).toEqual([
      expect.objectContaining({ peer: 2, up: true, txBytesPerS: 2000 }),
      expect.objectContaining({ peer: 3, up: false }),
    ]);
    expect(t.roundsPerS).toBe(20);
    expect(t.reserve).toEqual({ triples: 200, lex4: 300, prod4: 90, bits: 4000 });
    expect(t.opsLeft).toBe(120);
  });

  it('say down, frozen, stale and recovering', () => {
    expect(nodeTile(view({ running: false }, [now], [live()]), 3, now).state).toBe('down');
    expect(nodeTile(view({ frozen: true }, [now], [live()]), 3, now).state).toBe('frozen');
    expect(nodeTile(view({}, [now - STALE_MS - 1], [live()]), 3, now).state).toBe('stale');
    expect(nodeTile(view({}, [], []), 3, now).state).toBe('stale'); // running, never answered yet
    // answering without an engine: waiting for peers or recovering its shares
    expect(nodeTile(view({}, [now], [node(['tenebra_node_pending_ops 0'])]), 3, now).state).toBe('recovering');
    const recovered = live().map((s) => (s.labels.event === 'recovered' ? { ...s, value: 1 } : s));
    expect(nodeTile(view({}, [now - 1000, now], [live(), recovered]), 3, now).state).toBe('recovering');
    // in quorum with its peers but still recovering its shares (its ready gauge at 0), then ready
    expect(nodeTile(view({}, [now], [live(['tenebra_node_ready 0'])]), 3, now).state).toBe('recovering');
    expect(nodeTile(view({}, [now], [live(['tenebra_node_ready 1'])]), 3, now).state).toBe('up');
  });

  it('say recovering for a node without quorum while the others have one', () => {
    const noQuorum = live().map((s) => (s.name === 'tenebra_node_quorum' ? { ...s, value: 0 } : s));
    const services = (['sequencer', 'gateway'] as const).map((role) => view({ role, index: 0 }, [now], [node(['x 1'])]));
    const states = (views: ProcView[]) => snapshot([...views, ...services], 3, now).nodes.map((x) => x.state);
    expect(states([view({ index: 1 }, [now], [live()]), view({ index: 2 }, [now], [noQuorum])])).toEqual(['up', 'recovering']);
    // nobody has a quorum (too many down): they are up, waiting, not joining anyone
    expect(states([view({ index: 1 }, [now], [noQuorum]), view({ index: 2 }, [now], [noQuorum])])).toEqual(['up', 'up']);
  });

  it('leakage is the highest count any answering node reports, per label', () => {
    const a = view({ index: 1 }, [now - 1000, now], [node(['tenebra_node_reveals_total{label="cross"} 10']), node(['tenebra_node_reveals_total{label="cross"} 14'])]);
    // node 2 restarted: its counter started over
    const b = view({ index: 2 }, [now], [node(['tenebra_node_reveals_total{label="cross"} 3', 'tenebra_node_reveals_total{label="self-trade"} 1'])]);
    expect(leakage([a, b])).toEqual([{ label: 'cross', perS: 4, total: 14 }, { label: 'self-trade', perS: 0, total: 1 }]);
  });
});
