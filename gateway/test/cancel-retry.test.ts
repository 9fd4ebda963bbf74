// A cancel whose answer the client did not get (its request timed out) and the SDK's retry of it,
// against the real gateway: the race behind chaos-real seed 25's order CANCELLED/USER_REQUESTED that
// the campaign's reference wanted NEW (ADR 0050). The committee is held (a slow committee: nodes
// killed, recovering), the SDK's first DELETE times out, the committee then applies the cancel, and
// the retry finds the order no longer live: 409, true in itself, but the cancel did take effect.
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { ApiError, DEFAULT_OUTCOME_TIMEOUT_MS, TenebraRestClient, type RestClientOptions } from '@tenebra/client';
import { DEFAULT_ACK_TIMEOUT_MS, DEFAULT_CANCEL_TIMEOUT_MS } from '../src/orders/service';
import { startRig, call, newAccount, bearer, type Rig, type Account } from './harness';
import { until } from './fakes';

const O = { symbol: 'ETH-USDC-PERP', side: 'buy', type: 'limit', quantity: '0.5', price: '2990', time_in_force: 'GTC' } as const;

describe('a cancel retried after a timeout', () => {
  let rig: Rig;
  let a: Account;
  beforeAll(async () => {
    // the gateway waits long for the outcome, so only the client's timeout ends the first attempt
    rig = await startRig({ cancelTimeoutMs: 30_000 });
    a = await newAccount(rig);
  });
  afterAll(async () => {
    rig.committee.resume();
    // The SDK's aborted attempts can leave a connection at the gateway that never sent a request;
    // the gateway's graceful stop waits for it (Node's checks of silent connections end at close).
    rig.gw.app.server.closeAllConnections();
    await rig?.close();
  });

  const rest = (extra: Partial<RestClientOptions>) => new TenebraRestClient({
    baseUrl: rig.gw.urls.baseUrl, credentials: { apiKey: a.api_key, apiSecret: a.api_secret, passphrase: a.passphrase }, random: () => 0, ...extra,
  });
  const status = async (id: string) => {
    const d = (await call(rig.gw, 'GET', `/api/v1/orders/${id}`, undefined, bearer(a))).body.data as Record<string, unknown>;
    return { status: d['status'], cancel_reason: d['cancel_reason'] };
  };
  const cancelsOf = (id: string) => rig.seq.journal.filter((j) => j.op.kind === 'cancel' && String(j.op.pub.order_id) === id).length;
  /** Places through a client with the defaults: the tests' short timeouts are for the cancel. */
  const placeResting = async () => {
    const { order_id } = await rest({}).placeOrder(O);
    await until(async () => (await status(order_id)).status === 'NEW', 10_000, 'the order to rest');
    return order_id;
  };

  it('the retry answers 409 while the first attempt cancelled the order: the error says an earlier attempt may have executed', async () => {
    let retries = 0;
    const c = rest({
      timeoutMs: 1_000, outcomeTimeoutMs: 1_000, maxRetries: 2,
      // between the attempts: the committee catches up and applies the first attempt's cancel
      sleep: async () => {
        retries++;
        await until(() => cancelsOf(id) === 1, 10_000, 'the first attempt to be journaled');
        rig.committee.resume();
        await until(async () => (await status(id)).status === 'CANCELLED', 10_000, 'the cancel to apply');
      },
    });
    const id = await placeResting();
    await c.accessToken(); // the token first: only the DELETE meets the short timeout
    rig.committee.hold = true;
    const e = await c.cancelOrder(id).then(() => null, (x: unknown) => x);
    expect(retries).toBe(1);
    expect(e).toBeInstanceOf(ApiError);
    expect(e).toMatchObject({ httpStatus: 409, code: 1421, error: 'ORDER_NOT_LIVE' });
    // what the caller must know to report the cancel truthfully: it may have been this call's
    expect((e as ApiError).earlierAttemptMaybeExecuted).toBe(true);
    expect(await status(id)).toEqual({ status: 'CANCELLED', cancel_reason: 'USER_REQUESTED' });
    expect(cancelsOf(id)).toBe(1); // applied once
  });

  it('a 409 with no earlier attempt in doubt says so', async () => {
    const c = rest({});
    const id = await placeResting();
    await c.cancelOrder(id);
    const e = await c.cancelOrder(id).then(() => null, (x: unknown) => x);
    expect(e).toMatchObject({ httpStatus: 409, error: 'ORDER_NOT_LIVE', earlierAttemptMaybeExecuted: false });
  });

  it('a retry while the first attempt still waits joins it: one cancel op, answered 200', async () => {
    let retries = 0;
    const c = rest({
      timeoutMs: 1_000, outcomeTimeoutMs: 1_000, maxRetries: 2,
      sleep: async () => {
        retries++;
        // the committee applies the cancel while the retry waits for it
        setTimeout(() => rig.committee.resume(), 100);
      },
    });
    const id = await placeResting();
    await c.accessToken();
    rig.committee.hold = true;
    const done = await c.cancelOrder(id);
    expect(retries).toBe(1);
    expect(done).toMatchObject({ order_id: id, status: 'CANCELLED' });
    expect(cancelsOf(id)).toBe(1);
  });

  it('the SDK waits for a cancel longer than the gateway does, so a late outcome is answered QUEUED, not timed out and resent', async () => {
    const quick = await startRig({ cancelTimeoutMs: 400 });
    try {
      const q = await newAccount(quick);
      let slept = 0;
      // timeoutMs alone would end the attempt before the gateway's 202 at 400 ms
      const c = new TenebraRestClient({
        baseUrl: quick.gw.urls.baseUrl, credentials: { apiKey: q.api_key, apiSecret: q.api_secret, passphrase: q.passphrase },
        timeoutMs: 200, outcomeTimeoutMs: 2_000, sleep: async () => void slept++,
      });
      const placed = await call(quick.gw, 'POST', '/api/v1/orders', { ...O, quantity: 0.5, price: 2990 }, bearer(q));
      expect(placed.status, placed.raw).toBe(200);
      const order_id = placed.body.data.order_id as string;
      await until(async () => (await call(quick.gw, 'GET', `/api/v1/orders/${order_id}`, undefined, bearer(q))).body.data?.status === 'NEW', 10_000, 'the order to rest');
      await c.accessToken();
      slept = 0; // a slow token exchange may have been retried; the cancel is what counts
      quick.committee.hold = true;
      const e = await c.cancelOrder(order_id).then(() => null, (x: unknown) => x);
      expect(e).toBeInstanceOf(ApiError);
      expect((e as ApiError).queued).toBe(true);
      expect(slept).toBe(0); // one attempt
    } finally {
      quick.committee.resume();
      quick.gw.app.server.closeAllConnections();
      await quick.close();
    }
  });

  it("the SDK's default outcome wait exceeds the gateway's default waits before a QUEUED answer", () => {
    // chaos-real seed 25: the SDK's 10 s request timeout met the gateway's 10 s outcome wait
    expect(DEFAULT_OUTCOME_TIMEOUT_MS).toBeGreaterThan(DEFAULT_ACK_TIMEOUT_MS + DEFAULT_CANCEL_TIMEOUT_MS);
  });
});
