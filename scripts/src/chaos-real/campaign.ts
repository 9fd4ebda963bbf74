// The real-process fault campaign (issue 25 part 2, `npm run chaos:real`): one real cluster (five
// nodes, sequencer, gateway as OS processes on loopback), orders flowing through REST and the
// WebSocket at a steady pace, and per run: a kill -9 (a random pair of nodes, or the sequencer, or
// the gateway) at a random moment and its restart, then a partition of one or two nodes through their
// link control (POST /control/links, ADR 0011) and its healing. After each run every acknowledged
// order is checked against the plaintext reference and money against the fills (conservation).
import { TenebraRestClient, TenebraSocket } from '@tenebra/client';
import { divRound, INSTRUMENTS, microPerTickStep, type InstrumentSpec } from '@tenebra/config';
import { TIER_INFO } from '@tenebra/gateway';
import { appliedBy, createAccount, nodeStatus, startTestCluster, type TestCluster } from '../../test/harness';
import { replay, type AckedOp } from '../../test/reference';
import { Flow, rng, units, type Account } from './flows';

export interface CampaignOptions {
  runs: number;
  seed: number;
  /** stop starting runs after this many minutes (a run under way finishes) */
  maxMinutes: number;
  /** ms between one flow's operations */
  paceMs: number;
  /** fault kinds a run draws from (default all three) */
  kills?: KillKind[];
  /** a line every this many ms (0: none) */
  progressMs: number;
  /** an existing data folder (default: a fresh temporary one) */
  dataDir?: string;
  log: (line: string) => void;
}

export type KillKind = 'nodes' | 'sequencer' | 'gateway';

/**
 * Per fault: `stallMs`, the longest time without an acknowledgement (what a trader waits for an
 * answer) from the fault until recovery; `matchStallMs`, the longest time in that window without a
 * newly applied operation at any node (while operations wait); `recoverMs`, from the restart (or the
 * healing) until every node sees all five again and has applied an operation sequenced after it.
 */
export interface FaultFigures {
  stallMs: number;
  matchStallMs: number;
  recoverMs: number;
}

export interface RunResult {
  run: number;
  kill: { kind: KillKind; nodes: number[] } & FaultFigures;
  partition: { nodes: number[]; heldMs: number } & FaultFigures;
  /** from the end of the flows until every acknowledged order showed its reference state */
  settleMs: number;
  acked: number;
  lost: number;
  wrong: number;
  unsettled: number;
  /** cancels answered 409 after an attempt that may have executed, and those that had cancelled (FlowStats.inDoubt) */
  cancelsInDoubt: { cancels: number; applied: number };
  /** deposits − fees + bonuses − Σ(balance + position margin + unrealized at a common mark), micro-USDC */
  driftMicro: bigint;
  driftTolerance: bigint;
  problems: string[];
  durationMs: number;
}

const DEPOSIT_USDC = 5_000_000n;
const ACCOUNTS = 4;
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
const instrument = (symbol: string): InstrumentSpec => INSTRUMENTS.find((i) => i.symbol === symbol)!;
const decimalsOf = (step: string): number => (step.split('.')[1] ?? '').length;

/** Runs the campaign; resolves with every run's result (the caller prints the summary). */
export async function runCampaign(opts: CampaignOptions): Promise<{ results: RunResult[]; dataDir: string }> {
  const rand = rng(opts.seed);
  const started = Date.now();
  const log = opts.log;
  log(`chaos:real seed ${opts.seed}: starting a cluster ...`);
  const tc = await startTestCluster({ supervise: true, ...(opts.dataDir ? { dataDir: opts.dataDir } : {}) });
  const flows: Flow[] = [];
  let phase = 'setup';
  const ticker = opts.progressMs > 0 ? setInterval(() => log(progressLine(tc, flows, phase, started)), opts.progressMs) : null;
  const applied = new AppliedWatch(tc);
  try {
    const creds = await Promise.all(Array.from({ length: ACCOUNTS }, () => createAccount(tc.dataDir, 'Apex', DEPOSIT_USDC.toString())));
    const accounts: Account[] = await Promise.all(creds.map(async (c, k) => {
      const rest = new TenebraRestClient({ baseUrl: tc.baseUrl, credentials: { apiKey: c.api_key, apiSecret: c.api_secret, passphrase: c.passphrase }, maxRetries: 2 });
      const socket = new TenebraSocket({ url: tc.cluster.wsUrl, rest });
      socket.on('error', () => undefined); // reconnects by itself; the flow settles what a drop left open
      await socket.connect();
      return { rest, socket, owner: BigInt(k + 1) };
    }));
    const acked: AckedOp[] = [];
    const owners = new Map<string, Account>();
    const shape = (symbol: string, mid: string, minSteps: number, maxSteps: number) => {
      const inst = instrument(symbol);
      const td = decimalsOf(inst.tick_size);
      return { midTicks: units(mid, td), minSteps, maxSteps, stepDecimals: decimalsOf(inst.step_size), tickDecimals: td };
    };
    // Apex's minimum notional is 100 USDC: ETH 0.05-0.5 at 3000, SOL 1-4 at 150
    flows.push(
      new Flow('rest', 'ETH-USDC-PERP', 'rest', accounts, acked, owners, rng(opts.seed * 7 + 1), shape('ETH-USDC-PERP', '3000', 50, 500), opts.paceMs),
      new Flow('ws', 'SOL-USDC-PERP', 'ws', accounts, acked, owners, rng(opts.seed * 7 + 2), shape('SOL-USDC-PERP', '150', 100, 400), opts.paceMs),
    );
    const confirmed = new Map<string, string>();
    const results: RunResult[] = [];
    for (let run = 1; run <= opts.runs; run++) {
      if (Date.now() - started > opts.maxMinutes * 60_000) {
        log(`time bound of ${opts.maxMinutes} min reached: ${run - 1} runs done`);
        break;
      }
      phase = `run ${run}: waiting for five live nodes`;
      await allAlive(tc, 240_000);
      const t0 = Date.now();
      const before = flows.reduce((s, f) => s + f.stats.acked, 0);
      const unsettledBefore = flows.reduce((s, f) => s + f.stats.unsettled.length, 0);
      const doubtBefore = inDoubt(flows);
      const problems: string[] = [];
      for (const f of flows) f.start();
      // 1. a kill -9 at a random moment, restarted after a random pause
      const kinds = opts.kills ?? ['nodes', 'sequencer', 'gateway'];
      const r = rand();
      const kind: KillKind = kinds.length === 1 ? kinds[0]! : r < 0.7 && kinds.includes('nodes') ? 'nodes' : r < 0.85 && kinds.includes('sequencer') ? 'sequencer' : kinds.includes('gateway') ? 'gateway' : kinds[0]!;
      const pair = pick(rand, [1, 2, 3, 4, 5], 2);
      phase = `run ${run}: flowing before the kill`;
      await sleep(1_000 + rand() * 4_000);
      const killAt = Date.now();
      phase = `run ${run}: ${kind === 'nodes' ? `nodes ${pair.join(',')}` : kind} killed`;
      if (kind === 'nodes') await Promise.all(pair.map((k) => tc.cluster.kill('committee', k)));
      else await tc.cluster.kill(kind, 0);
      await sleep(2_000 + rand() * 4_000);
      const restartAt = Date.now();
      phase = `run ${run}: ${kind === 'nodes' ? `nodes ${pair.join(',')}` : kind} restarting`;
      if (kind === 'nodes') for (const k of pair) tc.cluster.spawnProc('committee', k);
      else tc.cluster.spawnProc(kind, 0);
      tc.cluster.writeClusterFile();
      const killRecovered = await recovered(tc, applied, restartAt, 180_000).catch((e: unknown) => {
        problems.push(`no recovery after the kill: ${String(e)}`);
        return Date.now();
      });
      const killStall = stall(flows, killAt, killRecovered);
      const killMatchStall = applied.longestGap(killAt, killRecovered);
      // 2. a partition of one or two nodes from the rest, through their link control, then healed
      phase = `run ${run}: flowing before the partition`;
      await sleep(1_000 + rand() * 2_000);
      const cut = pick(rand, [1, 2, 3, 4, 5], rand() < 0.5 ? 1 : 2);
      const rest = [1, 2, 3, 4, 5].filter((k) => !cut.includes(k));
      const cutAt = Date.now();
      phase = `run ${run}: nodes ${cut.join(',')} cut off`;
      try {
        for (const k of cut) await setLinks(tc, k, { blocked_peers: rest });
      } catch (e) {
        problems.push(`cutting ${cut.join(',')} failed: ${String(e)}`);
      }
      await sleep(3_000 + rand() * 5_000);
      const healAt = Date.now();
      phase = `run ${run}: healing ${cut.join(',')}`;
      for (const k of cut) {
        // a cut node may have found itself stale and restarted meanwhile (no cuts survive a restart)
        await setLinks(tc, k, { blocked_peers: [] }).catch((e: unknown) => problems.push(`healing ${k}: ${String(e)}`));
      }
      const cutRecovered = await recovered(tc, applied, healAt, 180_000).catch((e: unknown) => {
        problems.push(`no recovery after healing: ${String(e)}`);
        return Date.now();
      });
      const cutStall = stall(flows, cutAt, cutRecovered);
      const cutMatchStall = applied.longestGap(cutAt, cutRecovered);
      phase = `run ${run}: flowing after healing`;
      await sleep(2_000);
      phase = `run ${run}: stopping the flows`;
      await Promise.all(flows.map((f) => f.stop()));
      // 3. checks
      phase = `run ${run}: checking ${acked.length} operations against the reference`;
      const settleFrom = Date.now();
      const check = await verify(acked, owners, confirmed, 300_000);
      const settleMs = Date.now() - settleFrom;
      phase = `run ${run}: checking collateral`;
      const money = await conservation(accounts, acked).catch((e: unknown) => {
        problems.push(`conservation check failed to read: ${String(e)}`);
        return { drift: -1n, tolerance: 0n };
      });
      problems.push(...check.details.slice(0, 5));
      const res: RunResult = {
        run,
        kill: { kind, nodes: kind === 'nodes' ? pair : [], stallMs: killStall, matchStallMs: killMatchStall, recoverMs: killRecovered - restartAt },
        partition: { nodes: cut, heldMs: healAt - cutAt, stallMs: cutStall, matchStallMs: cutMatchStall, recoverMs: cutRecovered - healAt },
        settleMs,
        acked: flows.reduce((s, f) => s + f.stats.acked, 0) - before,
        lost: check.lost, wrong: check.wrong,
        unsettled: flows.reduce((s, f) => s + f.stats.unsettled.length, 0) - unsettledBefore,
        cancelsInDoubt: { cancels: inDoubt(flows).cancels - doubtBefore.cancels, applied: inDoubt(flows).applied - doubtBefore.applied },
        driftMicro: money.drift, driftTolerance: money.tolerance, problems, durationMs: Date.now() - t0,
      };
      results.push(res);
      log(runLine(res));
    }
    for (const a of accounts) await a.socket?.close().catch(() => undefined);
    return { results, dataDir: tc.dataDir };
  } finally {
    if (ticker) clearInterval(ticker);
    applied.stop();
    await Promise.all(flows.map((f) => f.stop()));
    await tc.cleanup();
  }
}

function inDoubt(flows: Flow[]): { cancels: number; applied: number } {
  return flows.reduce((s, f) => ({ cancels: s.cancels + f.stats.inDoubt.cancels, applied: s.applied + f.stats.inDoubt.applied }), { cancels: 0, applied: 0 });
}

function pick(rand: () => number, from: number[], k: number): number[] {
  const pool = [...from];
  const out: number[] = [];
  while (out.length < k) out.push(pool.splice(Math.floor(rand() * pool.length), 1)[0]!);
  return out.sort((a, b) => a - b);
}

async function setLinks(tc: TestCluster, node: number, body: { blocked_peers: number[] }): Promise<void> {
  const url = tc.cluster.linkControlUrls().find((u) => u.index === node)!.url;
  const r = await fetch(url, {
    method: 'POST', headers: { authorization: `Bearer ${tc.cluster.operatorToken}`, 'content-type': 'application/json' }, body: JSON.stringify(body),
  });
  if (r.status !== 200) throw new Error(`POST ${url}: ${r.status} ${await r.text()}`);
}

/** Every node's newest status line is later than `since` and counts all five alive. */
function fiveAliveSince(tc: TestCluster, since: number): boolean {
  return [1, 2, 3, 4, 5].every((k) => {
    const st = nodeStatus(tc.dataDir, k);
    return !!st && st.time > since && st.alive.length === 5;
  });
}

async function allAlive(tc: TestCluster, timeoutMs: number): Promise<void> {
  await tc.cluster.waitReady(timeoutMs);
  const deadline = Date.now() + timeoutMs;
  const since = Date.now();
  while (!fiveAliveSince(tc, since)) {
    if (Date.now() > deadline) throw new Error(`five live nodes not seen within ${timeoutMs} ms`);
    await sleep(250);
  }
}

/** Samples the highest sequence number applied at each node (their logs), once a second. */
class AppliedWatch {
  /** (time, highest seq applied at any node) each time it rose */
  readonly rises: { t: number; seq: bigint }[] = [];
  private readonly timer: NodeJS.Timeout;
  constructor(private readonly tc: TestCluster) {
    this.timer = setInterval(() => {
      const top = this.perNode().reduce((a, b) => (b > a ? b : a), 0n);
      if (top > (this.rises.at(-1)?.seq ?? -1n)) this.rises.push({ t: Date.now(), seq: top });
    }, 1_000);
    this.timer.unref();
  }
  perNode(): bigint[] {
    return [1, 2, 3, 4, 5].map((k) => {
      try {
        return BigInt(appliedBy(this.tc.dataDir, k) || '0');
      } catch {
        return 0n;
      }
    });
  }
  /** The longest interval within [from, until] in which no node applied anything new. */
  longestGap(from: number, until: number): number {
    let prev = from;
    let worst = 0;
    for (const r of this.rises) {
      if (r.t <= from) continue;
      if (r.t > until) break;
      worst = Math.max(worst, r.t - prev);
      prev = r.t;
    }
    return Math.max(worst, until - prev);
  }
  stop(): void {
    clearInterval(this.timer);
  }
}

/**
 * Recovered: the restarted process is ready, every node sees all five again (status lines, every
 * 2 s) and every node has applied an operation sequenced after `since` (beyond the highest any node
 * had applied then): the restarted or healed nodes are current and matching goes on.
 */
async function recovered(tc: TestCluster, applied: AppliedWatch, since: number, timeoutMs: number): Promise<number> {
  const deadline = Date.now() + timeoutMs;
  const mark = applied.perNode().reduce((a, b) => (b > a ? b : a), 0n);
  await tc.cluster.waitReady(timeoutMs);
  for (;;) {
    const behind = applied.perNode().map((s, i) => (s > mark ? 0 : i + 1)).filter((k) => k > 0);
    const alive = fiveAliveSince(tc, since);
    if (alive && behind.length === 0) return Date.now();
    if (Date.now() > deadline) throw new Error(`not recovered within ${timeoutMs} ms (five alive seen by all: ${alive}; nodes without a newer op than seq ${mark}: ${behind.join(',') || 'none'})`);
    await sleep(250);
  }
}

/** The longest wait for an acknowledgement (either flow) from `from` until the first one after `until`. */
function stall(flows: Flow[], from: number, until: number): number {
  const times = flows.flatMap((f) => f.stats.ackTimes).sort((a, b) => a - b);
  let prev = from;
  let worst = 0;
  for (const t of times) {
    if (t <= from) continue;
    worst = Math.max(worst, t - prev);
    prev = t;
    if (t > until) return worst;
  }
  return Math.max(worst, Date.now() - prev);
}

/** Checks every order whose expected state is not yet confirmed; lost = not found, wrong = other state at the deadline. */
async function verify(acked: AckedOp[], owners: Map<string, Account>, confirmed: Map<string, string>, timeoutMs: number): Promise<{ lost: number; wrong: number; details: string[] }> {
  const { states } = await replay(acked);
  const todo = [...states].filter(([id, want]) => confirmed.get(id) !== key(want.status, want.filled, want.cancelReason));
  const deadline = Date.now() + timeoutMs;
  let lost = 0;
  let wrong = 0;
  const details: string[] = [];
  const decimals = new Map(INSTRUMENTS.map((i) => [i.symbol, decimalsOf(i.step_size)]));
  const symbolOf = new Map(acked.filter((a) => a.kind === 'place').map((a) => [a.orderId, a.symbol]));
  // a few at a time: the gateway's rate limits are per account, and the machine is small
  let next = 0;
  await Promise.all(Array.from({ length: 4 }, async () => {
    while (next < todo.length) {
      const [id, want] = todo[next++]!;
      const wantKey = key(want.status, want.filled, want.cancelReason);
      const acct = owners.get(id)!;
      let seen = 'nothing';
      for (;;) {
        try {
          const o = await acct.rest.getOrder(id);
          seen = key(o.status, units(o.filled_quantity ?? '0', decimals.get(symbolOf.get(id)!)!), o.cancel_reason ?? null);
          if (seen === wantKey) {
            confirmed.set(id, wantKey);
            break;
          }
        } catch (e) {
          seen = String(e);
          if (/\b404\b|not found/i.test(seen) && Date.now() > deadline) {
            lost++;
            details.push(`LOST ${id}: ${seen}`);
            break;
          }
        }
        if (Date.now() > deadline) {
          wrong++;
          details.push(`WRONG ${id}: want ${wantKey}, seen ${seen}`);
          break;
        }
        await sleep(300);
      }
    }
  }));
  return { lost, wrong, details };
}

const key = (status: string, filled: bigint, reason: string | null): string => `${status}/${filled}/${reason ?? '-'}`;

/**
 * Money: Σ over the accounts of balance + position margin + unrealized PnL at one mark per symbol
 * equals the deposits − the fees of the reference's fills + the bonuses paid. Positions are all
 * between these accounts, so their PnL at a common mark sums to zero; each unrealized PnL is floored
 * to the micro-USDC and funding's rounding goes to the insurance fund, so the drift may be a few
 * micro-USDC (tolerance: one per open position, and one per position per funding interval passed).
 */
async function conservation(accounts: Account[], acked: AckedOp[]): Promise<{ drift: bigint; tolerance: bigint }> {
  const { fills } = await replay(acked);
  const apex = TIER_INFO.Apex;
  let fees = 0n;
  let instant = 0n;
  for (const f of fills) {
    const inst = instrument(f.symbol);
    const ts = f.qtySteps * f.priceTicks;
    const taker = feeMicro(inst, ts, apex.takerFeePips);
    fees += taker + feeMicro(inst, ts, apex.makerFeePips);
    instant += (taker * BigInt(apex.instantTakerBonusBps)) / 10_000n;
  }
  let held = 0n;
  let hourly = 0n;
  let positions = 0n;
  const marks = new Map<string, bigint>();
  for (const a of accounts) {
    const acct = await a.rest.account();
    held += units(acct['balance'] as string, 6) + units(acct['position_margin'] as string, 6);
    const vip = await a.rest.accountVip();
    hourly += units(((vip['bonuses_received'] as Record<string, string>) ?? {})['hourly'] ?? '0', 6);
    for (const p of await a.rest.positions()) {
      const inst = instrument(p.symbol);
      const mark = units(p.mark_price, decimalsOf(inst.tick_size));
      const common = marks.get(p.symbol) ?? mark;
      marks.set(p.symbol, common);
      const size = units(p.size, decimalsOf(inst.step_size)) * (p.side === 'short' ? -1n : 1n);
      const { num, den } = microPerTickStep(inst);
      held += units(p.unrealized_pnl, 6) + divRound(size * (common - mark) * num, den, 'floor');
      positions++;
    }
  }
  const deposits = BigInt(accounts.length) * DEPOSIT_USDC * 1_000_000n;
  const hoursSeen = 2n; // funding intervals (1 h) a run of the campaign can span at most
  return { drift: deposits - fees + instant + hourly - held, tolerance: 2n * positions * hoursSeen };
}

/** The gateway's fee rounding (charges up, rebates toward zero), as docs/api.md states it. */
function feeMicro(inst: InstrumentSpec, tickSteps: bigint, pips: bigint): bigint {
  const { num, den } = microPerTickStep(inst);
  if (pips >= 0n) return divRound(tickSteps * num * pips, den * 1_000_000n, 'ceil');
  return -divRound(tickSteps * num * -pips, den * 1_000_000n, 'floor');
}

function progressLine(tc: TestCluster, flows: Flow[], phase: string, started: number): string {
  const now = Date.now();
  const acks = flows.map((f) => `${f.name} ${f.stats.acked}`).join(', ');
  const last = Math.max(0, ...flows.map((f) => f.stats.ackTimes.at(-1) ?? 0));
  const alive = [1, 2, 3, 4, 5].map((k) => nodeStatus(tc.dataDir, k)?.alive.length ?? 0).join('');
  return `[${((now - started) / 1000).toFixed(0).padStart(5)} s] ${phase} | acked ${acks} | last ack ${last ? ((now - last) / 1000).toFixed(1) : '-'} s ago | alive seen per node ${alive}`;
}

export function runLine(r: RunResult): string {
  const s = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
  const kill = r.kill.kind === 'nodes' ? `nodes ${r.kill.nodes.join('+')}` : r.kill.kind;
  const money = r.driftMicro >= 0n && r.driftMicro <= r.driftTolerance ? `conserved (drift ${r.driftMicro} µUSDC)` : `NOT CONSERVED (drift ${r.driftMicro} µUSDC, tolerance ${r.driftTolerance})`;
  return `run ${String(r.run).padStart(2)}: kill ${kill}: stall ${s(r.kill.stallMs)} (matching ${s(r.kill.matchStallMs)}), recovered ${s(r.kill.recoverMs)} after restart | ` +
    `cut ${r.partition.nodes.join('+')} for ${s(r.partition.heldMs)}: stall ${s(r.partition.stallMs)} (matching ${s(r.partition.matchStallMs)}), recovered ${s(r.partition.recoverMs)} after healing | ` +
    `acked ${r.acked}, lost ${r.lost}, wrong ${r.wrong}, unsettled ${r.unsettled}, settled in ${s(r.settleMs)} | ${money} | ${s(r.durationMs)}` +
    (r.cancelsInDoubt.cancels ? ` | cancels in doubt ${r.cancelsInDoubt.cancels} (${r.cancelsInDoubt.applied} had applied)` : '') +
    (r.problems.length ? `\n    ${r.problems.join('\n    ')}` : '');
}
