// GET /positions (scope read): the account's open positions as {positions: [Position]}.
// GET|POST /positions/{symbol}/leverage and POST /positions/{symbol}/margin: the trader's leverage
// per symbol and its position's isolated margin (positions/leverage.ts; docs/api.md).
import type { FastifyInstance } from 'fastify';
import type { InstrumentSpec } from '@tenebra/config';
import type { GatewayDb } from '../store/db';
import { positionKey } from '../store/db';
import type { InstrumentRegistry } from '../instruments';
import type { GatewayEvents } from '../events';
import type { GatewayClock } from '../clock';
import { ApiError } from '../errors';
import { positionView, positionsOf } from '../positions/view';
import { leverageField, leverageTopUp, freeCollateral, moveMargin } from '../positions/leverage';
import { effectiveLeverage } from '../orders/margin';
import { big, str, type PositionRec } from '../store/records';
import { oneOf } from '../orders/validate';
import { rejectUnknownParams } from '../stats/window';
import { API_PREFIX, requireAuth } from './app';
import type { MarkSource } from '../risk-monitor/mark-book';
import { sendData } from './reply';
import { usdcField } from './usdc-field';
import { microToUsdc } from '@tenebra/config';

export interface PositionRouteDeps {
  db: GatewayDb;
  registry: InstrumentRegistry;
  marks?: MarkSource;
  /** position events of margin changes (the positions channel); absent: none emitted */
  events?: GatewayEvents;
  clock?: GatewayClock;
}

type SymbolParams = { Params: { symbol: string } };

export function registerPositionRoutes(app: FastifyInstance, deps: PositionRouteDeps): void {
  const mark = (symbol: string): bigint | null => deps.marks?.markTicks(symbol) ?? null;
  const nowNs = (): bigint => deps.clock?.nowNs() ?? BigInt(Date.now()) * 1_000_000n;
  const instrument = (symbol: string): InstrumentSpec => {
    const inst = deps.registry.get(symbol);
    if (!inst) throw new ApiError('not_found', `unknown symbol '${symbol.slice(0, 64)}'; GET /instruments lists the symbols`);
    return inst;
  };
  const emit = (p: PositionRec): void => {
    deps.events?.emit('position', { update_reason: 'margin', position: p });
  };

  app.get<{ Querystring: Record<string, unknown> }>(`${API_PREFIX}/positions`, async (req, reply) => {
    const acct = requireAuth(req, 'read');
    rejectUnknownParams(req.query, []);
    const positions = positionsOf(deps.db, acct.user_id)
      .filter((p) => big(p.size_steps) !== 0n)
      .map((p) => positionView(p, deps.registry.get(p.symbol)!, mark(p.symbol)));
    return sendData(req, reply, { positions });
  });

  app.get<SymbolParams>(`${API_PREFIX}/positions/:symbol/leverage`, async (req, reply) => {
    const acct = requireAuth(req, 'read');
    rejectUnknownParams(req.query as Record<string, unknown>, []);
    const inst = instrument(req.params.symbol);
    const a = deps.db.accounts.get(acct.user_id) ?? acct;
    return sendData(req, reply, { symbol: inst.symbol, leverage: effectiveLeverage(a, inst), max_leverage: inst.max_leverage });
  });

  app.post<SymbolParams>(`${API_PREFIX}/positions/:symbol/leverage`, async (req, reply) => {
    const acct = requireAuth(req, 'trade');
    rejectUnknownParams(req.query as Record<string, unknown>, []);
    const inst = instrument(req.params.symbol);
    const b = objectBody(req.body, ['leverage']);
    const leverage = leverageField(b.leverage, inst, 'invalid_request');
    const now = nowNs();
    const changed = await deps.db.txAsync(() => {
      const a = deps.db.accounts.get(acct.user_id)!;
      const key = positionKey(a.user_id, inst.symbol);
      const pos = deps.db.positions.get(key);
      const open = pos !== undefined && big(pos.size_steps) !== 0n;
      // Lowering leverage on an open position raises its initial margin: the difference comes from free collateral.
      const topUp = leverageTopUp(inst, pos, leverage);
      if (topUp > freeCollateral(a)) {
        const free = freeCollateral(a);
        throw new ApiError('MARGIN_INSUFFICIENT', `${leverage}x needs ${microToUsdc(topUp)} USDC more margin on the ${inst.symbol} position than free collateral of ${microToUsdc(free > 0n ? free : 0n)} USDC`);
      }
      deps.db.accounts.putSync(a.user_id, {
        ...a, balance: str(big(a.balance) - topUp), leverage_by_symbol: { ...(a.leverage_by_symbol ?? {}), [inst.symbol]: leverage },
      });
      if (!open || (pos.leverage === leverage && topUp === 0n)) return null;
      const next: PositionRec = { ...pos, leverage, margin: str(big(pos.margin) + topUp), updated_ns: str(now) };
      deps.db.positions.putSync(key, next);
      return next;
    });
    if (changed) emit(changed);
    return sendData(req, reply, { symbol: inst.symbol, leverage, max_leverage: inst.max_leverage });
  });

  app.post<SymbolParams>(`${API_PREFIX}/positions/:symbol/margin`, async (req, reply) => {
    const acct = requireAuth(req, 'trade');
    rejectUnknownParams(req.query as Record<string, unknown>, []);
    const inst = instrument(req.params.symbol);
    const b = objectBody(req.body, ['action', 'amount']);
    let action: 'add' | 'remove';
    try {
      action = oneOf(b.action, 'action', ['add', 'remove'] as const);
    } catch (e) {
      throw new ApiError('invalid_request', e instanceof ApiError ? e.message.replace(/^INVALID_ORDER: /, '') : String(e));
    }
    if (b.amount === undefined || b.amount === null) throw new ApiError('invalid_request', "'amount' (USDC) is required");
    const amount = usdcField(b.amount, 'amount', false);
    const now = nowNs();
    const markTicks = mark(inst.symbol);
    const pos = await deps.db.txAsync(() => {
      const a = deps.db.accounts.get(acct.user_id)!;
      const key = positionKey(a.user_id, inst.symbol);
      const cur = deps.db.positions.get(key);
      if (!cur || big(cur.size_steps) === 0n) throw new ApiError('not_found', `no open position on ${inst.symbol}`);
      const next: PositionRec = { ...cur };
      const acctNext = { ...a };
      moveMargin(inst, acctNext, next, action, amount, markTicks, now);
      deps.db.accounts.putSync(a.user_id, acctNext);
      deps.db.positions.putSync(key, next);
      return next;
    });
    emit(pos);
    return sendData(req, reply, positionView(pos, inst, markTicks));
  });
}

/** A JSON object body with only `allowed` keys, or invalid_request (these are not order bodies: no trade code). */
function objectBody(body: unknown, allowed: readonly string[]): Record<string, unknown> {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw new ApiError('invalid_request', `the body must be a JSON object with ${allowed.join(', ')}`);
  for (const k of Object.keys(body)) if (!allowed.includes(k)) throw new ApiError('invalid_request', `unknown field '${k}'; allowed fields: ${allowed.join(', ')}`);
  return body as Record<string, unknown>;
}
