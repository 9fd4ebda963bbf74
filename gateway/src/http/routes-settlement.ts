// GET /settlement/status/{batchId} and GET /settlement/batches (scope read).
import type { FastifyInstance } from 'fastify';
import { fromUnits, microToUsdc } from '@tenebra/config';
import { ApiError } from '../errors';
import type { InstrumentRegistry } from '../instruments';
import type { SettlementService, BatchRec } from '../settlement/service';
import { RawNumber } from '../json';
import { rejectUnknownParams, limitParam } from '../stats/window';
import { API_PREFIX, requireAuth } from './app';
import { sendData } from './reply';

const MAX_LIST = 100;

export function registerSettlementRoutes(app: FastifyInstance, deps: { settlement: SettlementService; registry: InstrumentRegistry; network: string }): void {
  app.get<{ Params: { batchId: string }; Querystring: Record<string, unknown> }>(`${API_PREFIX}/settlement/status/:batchId`, async (req, reply) => {
    const acct = requireAuth(req, 'read');
    rejectUnknownParams(req.query, []);
    const id = req.params.batchId;
    if (!/^[1-9]\d{0,11}$/.test(id)) throw new ApiError('invalid_request', `batchId '${id.slice(0, 32)}' must be a positive decimal integer such as 17`);
    const b = deps.settlement.batch(id);
    if (!b) throw new ApiError('not_found', `no settlement batch ${id}; the latest is ${deps.settlement.lastBatchId}`);
    return sendData(req, reply, statusView(deps, b, acct.user_id));
  });

  app.get<{ Querystring: Record<string, unknown> }>(`${API_PREFIX}/settlement/batches`, async (req, reply) => {
    const acct = requireAuth(req, 'read');
    rejectUnknownParams(req.query, ['limit']);
    const limit = limitParam(req.query, 20, MAX_LIST);
    const batches = deps.settlement.batchesOf(acct.user_id, limit).map((id) => {
      const b = deps.settlement.batch(id)!;
      return { batch_id: b.batch_id, status: b.status, created_at: b.created_at, committed_at: b.committed_at };
    });
    return sendData(req, reply, { batches });
  });
}

function statusView(deps: { settlement: SettlementService; registry: InstrumentRegistry; network: string }, b: BatchRec, userId: string): Record<string, unknown> {
  const e = deps.settlement.entry(b.batch_id, userId);
  const height = deps.settlement.chain.height;
  return {
    batch_id: b.batch_id,
    status: b.status,
    created_at: b.created_at,
    committed_at: b.committed_at,
    accounts: b.commitments.length,
    commitments_root: b.commitments_root,
    shielded_pool_total: new RawNumber(microToUsdc(BigInt(b.shielded_pool_total))),
    chain: b.block === null ? null : {
      network: deps.network, block_height: b.block.height, block_hash: b.block.hash, tx_hash: b.block.tx_hash,
      confirmations: height - b.block.height + 1,
    },
    account: e === undefined ? null : {
      leaf_index: e.leaf,
      commitment: e.commitment,
      salt: e.salt,
      delta_json: e.delta_json,
      merkle_proof: e.proof,
      delta: {
        collateral: new RawNumber(microToUsdc(BigInt(e.delta.collateral))),
        positions: e.delta.positions.map((p) => {
          const inst = deps.registry.get(p.symbol);
          return {
            symbol: p.symbol,
            size: new RawNumber(inst ? fromUnits(BigInt(p.size_steps), inst.step_size) : p.size_steps),
            margin: new RawNumber(microToUsdc(BigInt(p.margin))),
            realized_pnl: new RawNumber(microToUsdc(BigInt(p.realized_pnl))),
            fees: new RawNumber(microToUsdc(BigInt(p.fees))),
          };
        }),
      },
    },
  };
}
