// The GET /account object (also the content of the WebSocket account.info op) and the VIP views
// (GET /account/vip, GET /vip/tiers). Money as exact JSON numbers in USDC; fees in basis points
// (negative: rebate) and percent; volumes in USDC. Field names are this gateway's choice (the spec
// leaves them open) and are listed in docs/api.md.
import { microToUsdc } from '@tenebra/config';
import { RawNumber } from '../json';
import { big, type AccountRec, type PositionRec, type Scope } from '../store/records';
import {
  TIER_INFO, TIERS, VOLUME_WINDOW_DAYS, bpsToPercent, nextTier, pipsToBps, tierFees, type Tier, type TierInfo,
} from '../tiers';
import type { VipStatus } from '../vip/service';

const usdc = (micro: bigint): RawNumber => new RawNumber(microToUsdc(micro));

/** Fee and bonus fields of a tier. */
function feeFields(t: TierInfo): Record<string, unknown> {
  const { makerPips, takerPips } = tierFees(t.tier);
  return {
    maker_fee_bps: new RawNumber(pipsToBps(makerPips)),
    taker_fee_bps: new RawNumber(pipsToBps(takerPips)),
    maker_fee_pct: new RawNumber(pipsToPercent(makerPips)),
    taker_fee_pct: new RawNumber(pipsToPercent(takerPips)),
    instant_taker_bonus_pct: new RawNumber(bpsToPercent(t.instantTakerBonusBps)),
    hourly_taker_bonus_pct: new RawNumber(bpsToPercent(t.hourlyTakerBonusBps)),
    min_notional: usdc(t.minNotionalMicro),
  };
}

/** Pips (1e-6) as percent text: 200 -> "0.02", -50 -> "-0.005". */
function pipsToPercent(pips: bigint): string {
  const neg = pips < 0n;
  const a = neg ? -pips : pips;
  const whole = a / 10_000n;
  const frac = (a % 10_000n).toString().padStart(4, '0').replace(/0+$/, '');
  const text = frac ? `${whole}.${frac}` : `${whole}`;
  return neg && text !== '0' ? `-${text}` : text;
}

/** Limits of a tier as served by GET /vip/tiers. */
function limitFields(t: TierInfo): Record<string, unknown> {
  return {
    rest_requests_per_minute: t.rest.perMinute, rest_requests_per_second: t.rest.perSecond, rest_burst: t.rest.burst,
    ws_messages_per_second: t.ws.msgPerSecond, ws_connections: t.ws.connections, ws_subscriptions: t.ws.subscriptions,
    orders_per_minute: t.ordersPerMinute, cancels_per_minute: t.cancelsPerMinute, mass_quote_batches_per_minute: t.massQuotesPerMinute,
    max_open_orders: t.maxOpenOrders, max_open_orders_per_symbol: t.maxOpenPerSymbol,
  };
}

/** GET /vip/tiers data: the whole schedule. */
export function tiersView(): Record<string, unknown> {
  return {
    volume_window_days: VOLUME_WINDOW_DAYS,
    tiers: TIERS.map((name) => {
      const t = TIER_INFO[name];
      return { tier: name, min_volume_30d: usdc(t.minVolume30dMicro), ...feeFields(t), limits: limitFields(t) };
    }),
  };
}

/** GET /account/vip data for an account whose record tier equals status.tier. */
export function vipView(status: VipStatus, nowMs: number): Record<string, unknown> {
  const t = TIER_INFO[status.tier];
  const next = nextTier(status.tier);
  return {
    tier: status.tier,
    ...feeFields(t),
    volume_30d: usdc(status.volume30dMicro),
    volume_window_days: VOLUME_WINDOW_DAYS,
    volume_tier: status.volumeTier,
    assigned_tier: status.floor,
    next_tier: next === null ? null : {
      tier: next.tier, min_volume_30d: usdc(next.minVolume30dMicro),
      volume_needed: usdc(next.minVolume30dMicro > status.volume30dMicro ? next.minVolume30dMicro - status.volume30dMicro : 0n),
    },
    as_of: new Date(nowMs).toISOString(),
  };
}

export interface AccountViewInput {
  acct: AccountRec;
  positions: readonly PositionRec[];
  env: string;
  /** scopes of the token that asked */
  tokenScopes: readonly Scope[];
  vip: VipStatus;
  /** Σ unrealized PnL of the open positions at the current marks, micro-USDC (risk-monitor/account-marks.ts); 0 when absent */
  unrealizedPnl?: bigint;
}

/** GET /account data: balances, VIP tier and account configuration in one object. */
export function accountView(i: AccountViewInput): Record<string, unknown> {
  const { acct } = i;
  const balance = big(acct.balance);
  const reserved = big(acct.reserved);
  let positionMargin = 0n;
  let open = 0;
  for (const p of i.positions) {
    positionMargin += big(p.margin);
    if (big(p.size_steps) !== 0n) open++;
  }
  const t = TIER_INFO[acct.tier as Tier];
  return {
    user_id: acct.user_id,
    environment: i.env,
    currency: 'USDC',
    balance: usdc(balance),
    reserved_margin: usdc(reserved),
    free_collateral: usdc(balance - reserved),
    position_margin: usdc(positionMargin),
    // equity = cash + Σ position equity (margin + unrealized PnL, spec: Margin model); isolated margin
    // keeps unrealized PnL out of free_collateral (it backs its own position only)
    unrealized_pnl: usdc(i.unrealizedPnl ?? 0n),
    equity: usdc(balance + positionMargin + (i.unrealizedPnl ?? 0n)),
    total_deposited: usdc(big(acct.deposited)),
    total_withdrawn: usdc(big(acct.withdrawn ?? '0')),
    open_orders: acct.open_orders,
    open_positions: open,
    vip_tier: acct.tier,
    maker_fee_bps: new RawNumber(pipsToBps(t.makerFeePips)),
    taker_fee_bps: new RawNumber(pipsToBps(t.takerFeePips)),
    volume_30d: usdc(i.vip.volume30dMicro),
    config: {
      leverage: acct.leverage,
      margin_mode: 'isolated',
      api_key: acct.api_key,
      api_key_scopes: acct.scopes,
      token_scopes: i.tokenScopes,
      max_open_orders: t.maxOpenOrders,
      max_open_orders_per_symbol: t.maxOpenPerSymbol,
      min_order_notional: usdc(t.minNotionalMicro),
    },
    created_at: acct.created_at,
  };
}
