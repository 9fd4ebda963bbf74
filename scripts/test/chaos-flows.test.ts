// The chaos:real campaign's REST cancel (scripts/src/chaos-real/flows.ts) against the real gateway
// (in process, fake sequencer and committee) and the real SDK: chaos-real seed 25's race made
// deterministic (ADR 0050). The SDK's first DELETE times out while the committee is slow, the
// committee then applies it, the SDK's own retry is answered 409 ORDER_NOT_LIVE. The flow must
// record the cancel, or the plaintext reference keeps the order NEW while the venue (truthfully)
// shows it CANCELLED / USER_REQUESTED.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TenebraRestClient } from '@tenebra/client';
import { startRig, newAccount, call, bearer, type Rig, type Account as RigAccount } from '../../gateway/test/harness';
import { until } from '../../gateway/test/fakes';
import { Flow, rng, type Account } from '../src/chaos-real/flows';
import { expectedStates, type AckedOp, type AckedPlace } from './reference';

describe('chaos:real flow: a cancel whose first attempt timed out', () => {
  let rig: Rig;
  let acct: RigAccount;
  beforeAll(async () => {
    rig = await startRig({ cancelTimeoutMs: 30_000 });
    acct = await newAccount(rig);
  });
  afterAll(async () => {
    rig.committee.resume();
    rig.gw.app.server.closeAllConnections(); // an aborted attempt's silent connection would hold the stop
    await rig.close();
  });

  const venueState = async (id: string) => {
    const d = (await call(rig.gw, 'GET', `/api/v1/orders/${id}`, undefined, bearer(acct))).body.data as Record<string, unknown>;
    return { status: d['status'], cancelReason: d['cancel_reason'] ?? null };
  };

  it('is recorded when the SDK retry finds the order already cancelled by the first attempt', async () => {
    let id = '';
    let retries = 0;
    const rest = new TenebraRestClient({
      baseUrl: rig.gw.urls.baseUrl, credentials: { apiKey: acct.api_key, apiSecret: acct.api_secret, passphrase: acct.passphrase },
      timeoutMs: 1_000, outcomeTimeoutMs: 1_000, maxRetries: 2, random: () => 0,
      // the SDK's backoff before its retry: meanwhile the committee applies the first attempt's cancel
      sleep: async () => {
        retries++;
        // the first attempt's cancel reached the journal (not a token request that timed out)
        await until(() => rig.seq.journal.some((j) => j.op.kind === 'cancel' && String(j.op.pub.order_id) === id), 10_000, 'the cancel to be journaled');
        rig.committee.resume();
        await until(async () => (await venueState(id)).status === 'CANCELLED', 10_000, 'the cancel to apply');
      },
    });
    const account: Account = { rest, socket: null, owner: 1n };
    const placed = await call(rig.gw, 'POST', '/api/v1/orders', { symbol: 'ETH-USDC-PERP', side: 'buy', type: 'limit', quantity: 0.5, price: 2990, time_in_force: 'GTC' }, bearer(acct));
    expect(placed.status, placed.raw).toBe(200);
    id = placed.body.data.order_id as string;
    await until(async () => (await venueState(id)).status === 'NEW', 10_000, 'the order to rest');
    const place: AckedPlace = { kind: 'place', orderId: id, symbol: 'ETH-USDC-PERP', side: 'buy', tif: 'GTC', priceTicks: 299_000n, qtySteps: 500n, owner: 1n };
    const acked: AckedOp[] = [place];
    const flow = new Flow('rest', 'ETH-USDC-PERP', 'rest', [account], acked, new Map([[id, account]]), rng(25), { midTicks: 300_000n, minSteps: 50, maxSteps: 500, stepDecimals: 3, tickDecimals: 2 }, 2_500);

    await rest.accessToken(); // the token first: only the DELETE meets the short timeout
    rig.committee.hold = true;
    await flow.cancel(place);
    expect(retries).toBe(1); // one SDK retry, inside the flow's first attempt

    expect(acked.map((a) => a.kind)).toEqual(['place', 'cancel']);
    const want = (await expectedStates(acked)).get(id)!;
    expect({ status: want.status, cancelReason: want.cancelReason }).toEqual(await venueState(id));
    expect(await venueState(id)).toEqual({ status: 'CANCELLED', cancelReason: 'USER_REQUESTED' });
    expect(flow.stats.unsettled).toEqual([]);
  });
});
