// POST /account/withdrawals (scope trade), GET /account/withdrawals and
// GET /account/withdrawals/{withdrawalId} (scope read). docs/api.md, "Withdrawals".
import type { FastifyInstance } from 'fastify';
import { microToUsdc } from '@tenebra/config';
import { ApiError } from '../errors';
import { RawNumber } from '../json';
import { big } from '../store/records';
import type { GatewayDb } from '../store/db';
import type { WithdrawalRec, WithdrawalService } from '../settlement/withdrawals';
import { rejectUnknownParams, limitParam } from '../stats/window';
import { API_PREFIX, requireAuth } from './app';
import { sendData } from './reply';
import { bodyObject } from './routes-public';
import { usdcField } from './usdc-field';

const MAX_LIST = 100;
const BODY_FIELDS = new Set(['amount', 'recipient', 'client_withdrawal_id']);

export function registerWithdrawalRoutes(app: FastifyInstance, deps: { withdrawals: WithdrawalService; db: GatewayDb }): void {
  app.post<{ Querystring: Record<string, unknown> }>(`${API_PREFIX}/account/withdrawals`, async (req, reply) => {
    const acct = requireAuth(req, 'trade');
    rejectUnknownParams(req.query, []);
    const b = bodyObject(req.body, 'amount, recipient and optionally client_withdrawal_id');
    for (const k of Object.keys(b)) if (!BODY_FIELDS.has(k)) throw new ApiError('invalid_request', `unknown field '${k.slice(0, 64)}'; a withdrawal takes amount, recipient and client_withdrawal_id`);
    if (b.amount === undefined) throw new ApiError('invalid_request', 'missing amount (USDC, e.g. 250.5)');
    if (b.recipient === undefined) throw new ApiError('invalid_request', "missing recipient: a fresh address ('0x' and 40 hex digits) that has never received a withdrawal");
    if (b.client_withdrawal_id !== undefined && typeof b.client_withdrawal_id !== 'string') throw new ApiError('invalid_request', 'client_withdrawal_id must be a string');
    const recipient = typeof b.recipient === 'string' ? b.recipient.toLowerCase() : b.recipient;
    const rec = await deps.withdrawals.withdraw({
      userId: acct.user_id, amountMicro: usdcField(b.amount, 'amount', false), recipient: recipient as string,
      clientWithdrawalId: (b.client_withdrawal_id as string | undefined) ?? null,
    });
    const now = deps.db.accounts.get(acct.user_id);
    return sendData(req, reply, {
      ...withdrawalView(rec),
      ...(now ? { free_collateral: new RawNumber(microToUsdc(big(now.balance) - big(now.reserved))) } : {}),
    });
  });

  app.get<{ Querystring: Record<string, unknown> }>(`${API_PREFIX}/account/withdrawals`, async (req, reply) => {
    const acct = requireAuth(req, 'read');
    rejectUnknownParams(req.query, ['limit']);
    const limit = limitParam(req.query, 20, MAX_LIST);
    return sendData(req, reply, { withdrawals: deps.withdrawals.list(acct.user_id, limit).map(withdrawalView) });
  });

  app.get<{ Params: { withdrawalId: string }; Querystring: Record<string, unknown> }>(`${API_PREFIX}/account/withdrawals/:withdrawalId`, async (req, reply) => {
    const acct = requireAuth(req, 'read');
    rejectUnknownParams(req.query, []);
    const id = req.params.withdrawalId;
    const rec = /^wd_[0-9a-f]{24}$/.test(id) ? deps.withdrawals.get(acct.user_id, id) : undefined;
    if (!rec) throw new ApiError('not_found', `no withdrawal ${id.slice(0, 64)} of this account`);
    return sendData(req, reply, withdrawalView(rec));
  });
}

/** The public shape of a withdrawal (amounts as exact USDC numbers). */
export function withdrawalView(w: WithdrawalRec): Record<string, unknown> {
  return {
    withdrawal_id: w.withdrawal_id, client_withdrawal_id: w.client_withdrawal_id, amount: new RawNumber(microToUsdc(big(w.amount))),
    recipient: w.recipient, status: w.status, created_at: w.created_at, released_at: w.released_at,
    shielded_pool_total: new RawNumber(microToUsdc(big(w.shielded_pool_total))),
    block: w.block ? { height: w.block.height, hash: w.block.hash, tx_hash: w.block.tx_hash, time: w.block.time } : null,
  };
}
