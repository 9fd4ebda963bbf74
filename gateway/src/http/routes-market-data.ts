// GET /market-data/reference[/{symbol}] (no token): the oracle reference the venue prices against,
// i.e. what the spec's "market-data proxy endpoints" (paths and shapes "not shown") proxy here. A
// dark pool has no lit book to show; this is the external price that marks positions, prices pegs
// (bid / ask / mid) and bounds limit prices. docs/api.md, "Market data".
import type { FastifyInstance } from 'fastify';
import { fromUnits } from '@tenebra/config';
import { ApiError } from '../errors';
import type { InstrumentRegistry } from '../instruments';
import type { PriceOracle } from '../orders/oracle';
import { RawNumber } from '../json';
import { rejectUnknownParams } from '../stats/window';
import { API_PREFIX } from './app';
import { sendData } from './reply';

export function registerMarketDataRoutes(app: FastifyInstance, deps: { registry: InstrumentRegistry; oracle: PriceOracle }): void {
  const view = (symbol: string): Record<string, unknown> => {
    const inst = deps.registry.get(symbol)!;
    const r = deps.oracle.reference(symbol);
    if (!r.ok) return { symbol, status: r.reason, detail: r.detail, mid: null, bid: null, ask: null, source: null, as_of: null };
    const px = (t: bigint): RawNumber => new RawNumber(fromUnits(t, inst.tick_size));
    return {
      symbol, status: 'fresh', mid: px(r.quote.mid), bid: px(r.quote.bid), ask: px(r.quote.ask),
      source: r.source, as_of: new Date(r.quote.atMs).toISOString(),
    };
  };

  app.get<{ Querystring: Record<string, unknown> }>(`${API_PREFIX}/market-data/reference`, async (req, reply) => {
    rejectUnknownParams(req.query, []);
    return sendData(req, reply, { references: deps.registry.list().instruments.map((i) => view(i.symbol)) });
  });

  app.get<{ Params: { symbol: string }; Querystring: Record<string, unknown> }>(`${API_PREFIX}/market-data/reference/:symbol`, async (req, reply) => {
    rejectUnknownParams(req.query, []);
    if (!deps.registry.get(req.params.symbol)) throw new ApiError('not_found', `unknown symbol '${req.params.symbol.slice(0, 64)}'; GET /instruments lists them`);
    return sendData(req, reply, view(req.params.symbol));
  });
}
