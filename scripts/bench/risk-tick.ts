// The gateway's risk tick in CPU time (prints figures; asserts nothing): a real gateway (the tests'
// order rig: stand-in committee and sequencer, in this process) with ACCOUNTS accounts holding a
// position in each of SYMBOLS instruments, then TICKS risk-monitor evaluations timed by process CPU,
// once with every mark moving before each tick (as under a load that trades) and once with the marks
// still. The monitor's own timer is off; each evaluation is an explicit tick().
//   npm run bench:risk-tick -- [--accounts 24] [--symbols 20] [--ticks 200]
import { performance } from 'node:perf_hooks';
import { INSTRUMENTS, fromUnits, toUnits } from '@tenebra/config';
import { REFERENCE_PRICES } from '@tenebra/gateway';
import { ManualClock } from '../../gateway/src/clock';
import { startOrderRig, account, post as postNow, settled, type OrderRig } from '../../gateway/test/order-rig';
import type { Account } from '../../gateway/test/harness';
import { parseFlags, positiveNumber } from '../src/flags';

const FLAGS = parseFlags(process.argv.slice(2), ['accounts', 'symbols', 'ticks']);
const arg = (name: string, dflt: number): number => {
  const text = FLAGS.str.get(name);
  return text === undefined ? dflt : positiveNumber(text, name);
};
const ACCOUNTS = arg('accounts', 24);
const SYMBOLS = arg('symbols', 20);
const TICKS = arg('ticks', 200);

const clock = new ManualClock(Date.UTC(2026, 0, 5, 12, 0, 0));
const insts = INSTRUMENTS.slice(0, SYMBOLS);

function setMark(rig: OrderRig, symbol: string, ticks: bigint): void {
  rig.sim.market.set(symbol, ticks);
  rig.sim.primary.publish();
  rig.sim.secondary.publish();
}

async function main(): Promise<void> {
  const rig = await startOrderRig({ clock, risk: { intervalMs: 0, fundingIntervalMs: 3_600_000 } });
  try {
    const accts: Account[] = [];
    for (let i = 0; i < ACCOUNTS; i++) accts.push(await account(rig, 'Apex', '10000000', { leverage: 5 }));
    const mids = new Map<string, bigint>();
    for (const inst of insts) {
      const mid = toUnits(REFERENCE_PRICES[inst.base_asset]!, inst.tick_size)!;
      mids.set(inst.symbol, mid);
      setMark(rig, inst.symbol, mid);
      // about 150 USDC a position, at least the instrument's minimum
      const step = Number(inst.step_size);
      const steps = BigInt(Math.max(Math.ceil(Number(inst.min_qty) / step), Math.ceil(150 / (Number(REFERENCE_PRICES[inst.base_asset]) * step))));
      const body = (side: string, tif: string) => ({ symbol: inst.symbol, side, type: 'limit', quantity: fromUnits(steps, inst.step_size), price: fromUnits(mid, inst.tick_size), time_in_force: tif });
      for (let i = 0; i + 1 < ACCOUNTS; i += 2) {
        clock.advance(2);
        const s = await postNow(rig, accts[i + 1]!, body('sell', 'GTC'));
        clock.advance(2);
        const b = await postNow(rig, accts[i]!, body('buy', 'IOC'));
        if (s.status !== 200 || b.status !== 200) throw new Error(`placement refused: ${s.status} ${b.status} ${b.raw}`);
      }
    }
    await settled(rig);
    await rig.gw.risk.tick(); // first evaluation: funding marks written, every position announced
    const open = [...insts].length * 2 * Math.floor(ACCOUNTS / 2);
    const run = async (moving: boolean): Promise<{ cpuUs: number; wallMs: number }> => {
      const c0 = process.cpuUsage();
      const t0 = performance.now();
      for (let k = 0; k < TICKS; k++) {
        if (moving) for (const [symbol, mid] of mids) setMark(rig, symbol, mid + BigInt((k % 5) - 2));
        await rig.gw.risk.tick();
      }
      const c = process.cpuUsage(c0);
      return { cpuUs: c.user + c.system, wallMs: performance.now() - t0 };
    };
    for (const moving of [true, false]) {
      const r = await run(moving);
      console.log(`marks ${moving ? 'moving' : 'still '}: ${TICKS} ticks over ${open} positions: ${(r.cpuUs / TICKS / 1000).toFixed(2)} ms CPU per tick (${(r.cpuUs / TICKS / open).toFixed(1)} µs per position), wall ${(r.wallMs / TICKS).toFixed(2)} ms per tick`);
    }
  } finally {
    await rig.close();
  }
}

void main().then(() => process.exit(0), (e: unknown) => {
  console.error(e);
  process.exit(1);
});
