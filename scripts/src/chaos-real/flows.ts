// The order streams of the real-process campaign: one over REST (ETH), one over the WebSocket's
// encrypted session (SOL), each sending one operation at a time at a steady pace, so that each
// book's acknowledgement order is its sequence order and the plaintext reference can replay it.
// Faults make answers ambiguous (a connection cut mid-request); every ambiguity is settled before the
// next operation of that stream, so the record of acknowledged operations is exact.
import { ApiError, type TenebraRestClient, type TenebraSocket } from '@tenebra/client';
import type { AckedOp, AckedPlace } from '../../test/reference';

/** Small seeded PRNG (the campaign's, so a run can be replayed with --seed). */
export function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s ^ (s >>> 15), 0x2c1b3c6d) + 0x6d2b79f5) >>> 0;
    return s / 2 ** 32;
  };
}

export interface Account {
  rest: TenebraRestClient;
  socket: TenebraSocket | null;
  /** the reference's owner id (self-trade prevention per account) */
  owner: bigint;
}

export interface FlowStats {
  acked: number;
  refused: number;
  /** acknowledgement times (ms, Date.now) */
  ackTimes: number[];
  /** client_order_ids never answered definitely (MAX_ATTEMPTS) */
  unsettled: string[];
  /**
   * Cancels answered 409 after an attempt that may have executed (ours or the SDK's retry), and how
   * many of them had in fact cancelled the order (recorded): chaos-real seed 25's race, counted.
   */
  inDoubt: { cancels: number; applied: number };
}

/** Tries (every ~0.5 s or the SDK's backoff) before an operation counts as unsettled. */
const MAX_ATTEMPTS = 240;

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** A book's stream: seeded limit orders (and cancels) around a mid, one at a time, every `paceMs`. */
export class Flow {
  readonly stats: FlowStats = { acked: 0, refused: 0, ackTimes: [], unsettled: [], inDoubt: { cancels: 0, applied: 0 } };
  private stopping = false;
  private running: Promise<void> | null = null;
  /** what the last operation is doing (the progress line) */
  doing = 'idle';

  constructor(
    readonly name: string,
    private readonly symbol: string,
    private readonly via: 'rest' | 'ws',
    private readonly accounts: Account[],
    private readonly acked: AckedOp[],
    private readonly owners: Map<string, Account>,
    private readonly rand: () => number,
    private readonly shape: { midTicks: bigint; minSteps: number; maxSteps: number; stepDecimals: number; tickDecimals: number },
    private readonly paceMs: number,
  ) {}

  start(): void {
    this.stopping = false;
    this.running = this.loop();
  }

  async stop(): Promise<void> {
    this.stopping = true;
    await this.running;
    this.running = null;
  }

  private async loop(): Promise<void> {
    while (!this.stopping) {
      const t0 = Date.now();
      await this.step();
      const wait = this.paceMs - (Date.now() - t0);
      if (wait > 0) await sleep(wait);
    }
  }

  private mine(): AckedPlace[] {
    return this.acked.filter((a): a is AckedPlace => a.kind === 'place' && a.symbol === this.symbol);
  }

  private async step(): Promise<void> {
    const places = this.mine();
    if (this.via === 'rest' && places.length > 4 && this.rand() < 0.15) {
      await this.cancel(places[Math.floor(this.rand() * places.length)]!);
      return;
    }
    await this.place();
  }

  private async place(): Promise<void> {
    const rand = this.rand;
    const acct = this.accounts[Math.floor(rand() * this.accounts.length)]!;
    const side = rand() < 0.5 ? 'buy' : 'sell';
    const offset = BigInt(Math.floor(rand() * 21) - 10);
    const priceTicks = this.shape.midTicks + (side === 'buy' ? offset : -offset);
    const qtySteps = this.shape.minSteps + Math.floor(rand() * (this.shape.maxSteps - this.shape.minSteps + 1));
    const tif = rand() < 0.2 ? 'IOC' : 'GTC';
    const cid = `chaos-${this.name}-${Date.now().toString(36)}-${Math.floor(rand() * 1e9).toString(36)}`;
    const req = {
      symbol: this.symbol, side, type: 'limit', time_in_force: tif, client_order_id: cid,
      quantity: decimal(BigInt(qtySteps), this.shape.stepDecimals), price: decimal(priceTicks, this.shape.tickDecimals),
    } as const;
    const record = (orderId: string): void => {
      this.owners.set(orderId, acct);
      this.acked.push({ kind: 'place', orderId, symbol: this.symbol, side, tif, priceTicks, qtySteps: BigInt(qtySteps), owner: acct.owner });
      this.stats.acked++;
      this.stats.ackTimes.push(Date.now());
    };
    this.doing = `placing ${cid}`;
    // Until the answer is definite: 200 or 202 (journaled: acknowledged), or a refusal (nothing
    // submitted). A lost answer is retried with the same client_order_id: the gateway answers the
    // original order instead of placing a second one, so it is placed at most once.
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      try {
        if (this.via === 'ws' && acct.socket) {
          const ack = await acct.socket.placeOrder(req);
          if (ack.code === 0 || ack.code === 1502) {
            record(ack.order_id);
            return;
          }
          if (ack.code === 1505 || ack.code === 503 || /unavailable|not ready/i.test(ack.message)) {
            if (this.stopping) {
              this.stats.refused++;
              return;
            }
            await sleep(500); // nothing submitted (reserve exhausted, sequencer away): again, same id
            continue;
          }
          this.stats.refused++;
          return;
        }
        const r = await acct.rest.placeOrder(req);
        record(r.order_id);
        return;
      } catch (e) {
        if (e instanceof ApiError) {
          if (e.httpStatus === 202 || e.code === 1502) {
            const id = (e.data as { order_id?: unknown } | undefined)?.order_id;
            if (typeof id === 'string') {
              record(id);
              return;
            }
            record((await this.lookup(acct, cid))!);
            return;
          }
          // 503 and 429: nothing was submitted; once the flows stop, the placement is simply not made
          if ((e.httpStatus === 503 || e.httpStatus === 429) && this.stopping) {
            this.stats.refused++;
            return;
          }
          if (e.httpStatus >= 500 || e.httpStatus === 429) {
            await sleep(500);
            continue;
          }
          this.stats.refused++;
          return;
        }
        // the connection failed (gateway killed, socket closed): did it land? same id again settles it
        await sleep(500);
        if (this.via === 'ws') {
          const id = await this.lookup(acct, cid);
          if (id !== undefined) {
            record(id);
            return;
          }
        }
      }
    }
    this.stats.unsettled.push(cid); // no definite answer in two minutes: a liveness failure, reported
  }

  /**
   * Whether a cancel of ours ended `orderId`: it is CANCELLED at user request (nothing else in the
   * campaign cancels so) and no cancel of it is recorded yet (a victim can be drawn twice). The
   * read is retried until answered: a guess either way would make the reference wrong.
   */
  private async cancelledByUs(acct: Account, orderId: string): Promise<boolean> {
    if (this.acked.some((a) => a.kind === 'cancel' && a.orderId === orderId)) return false;
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      try {
        const o = await acct.rest.getOrder(orderId);
        return o.status === 'CANCELLED' && o.cancel_reason === 'USER_REQUESTED';
      } catch {
        await sleep(500);
      }
    }
    this.stats.unsettled.push(`cancel of ${orderId} (its order never read)`);
    return false;
  }

  /** The order of a client_order_id, once the gateway answers (undefined: it has none). */
  private async lookup(acct: Account, cid: string): Promise<string | undefined> {
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      try {
        return (await acct.rest.getOrderByClientId(cid)).order_id;
      } catch (e) {
        if (e instanceof ApiError && e.httpStatus === 404) return undefined;
        await sleep(500);
      }
    }
    return undefined;
  }

  /** One cancel of `victim`, settled: recorded if it took effect (public for tests). */
  async cancel(victim: AckedPlace): Promise<void> {
    const acct = this.owners.get(victim.orderId)!;
    const record = (): void => {
      this.acked.push({ kind: 'cancel', orderId: victim.orderId, symbol: this.symbol });
      this.stats.acked++;
      this.stats.ackTimes.push(Date.now());
    };
    this.doing = `cancelling ${victim.orderId}`;
    let sent = false;
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      try {
        await acct.rest.cancelOrder(victim.orderId);
        record();
        return;
      } catch (e) {
        if (e instanceof ApiError && (e.httpStatus === 202 || e.code === 1502)) {
          record();
          return;
        }
        if (e instanceof ApiError && e.httpStatus === 409) {
          // Not live: filled or cancelled before; or cancelled by an earlier attempt of ours whose
          // answer was lost: one of this loop's (sent) or one the SDK retried itself (the error
          // says so). Chaos-real seed 25 missed the latter: the SDK's first DELETE timed out at 10 s,
          // the committee applied it, the retry got this 409, and the reference kept the order NEW.
          if (sent || e.earlierAttemptMaybeExecuted) {
            this.stats.inDoubt.cancels++;
            if (await this.cancelledByUs(acct, victim.orderId)) {
              this.stats.inDoubt.applied++;
              record();
            }
          }
          return;
        }
        if (e instanceof ApiError && e.httpStatus < 500 && e.httpStatus !== 429) {
          this.stats.refused++;
          return;
        }
        sent = true;
        await sleep(500);
      }
    }
    this.stats.unsettled.push(`cancel of ${victim.orderId}`);
  }
}

/** An integer count of 10^-d units as a decimal string (exact). */
export function decimal(units: bigint, d: number): string {
  if (d === 0) return units.toString();
  const neg = units < 0n;
  const s = (neg ? -units : units).toString().padStart(d + 1, '0');
  return `${neg ? '-' : ''}${s.slice(0, -d)}.${s.slice(-d)}`;
}

/** A decimal (string, or a number the SDK left as one) in units of 10^-d, exact; throws if finer. */
export function units(x: string | number, d: number): bigint {
  const text = typeof x === 'number' ? String(x) : x;
  const m = /^(-?)(\d+)(?:\.(\d+))?$/.exec(text);
  if (!m) throw new Error(`not a decimal: ${text}`);
  const frac = (m[3] ?? '').replace(/0+$/, '');
  if (frac.length > d) throw new Error(`${text} is finer than 10^-${d}`);
  const v = BigInt(m[2]! + frac.padEnd(d, '0'));
  return m[1] ? -v : v;
}
