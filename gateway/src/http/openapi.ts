// The OpenAPI 3.1 description of the REST interface, served raw (not in the envelope, so tools can
// read it) at GET /api/v1/openapi.json without a token. docs/api.md is the prose companion.
import type { FastifyInstance } from 'fastify';
import { API_PREFIX } from './app';
import { sendJson } from './reply';
import { rejectUnknownParams } from './query';

const num = { type: 'number' } as const;
const str = { type: 'string' } as const;
const int = { type: 'integer' } as const;
const dec = { type: 'string', pattern: '^-?\\d+(\\.\\d+)?$', description: 'decimal string' } as const;
const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const obj = (properties: Record<string, unknown>, required: string[] = Object.keys(properties)) => ({ type: 'object', properties, required });

const envelope = (data: unknown) => ({
  allOf: [ref('EnvelopeBase'), obj({ data }, ['data'])],
});

const errors = (...codes: number[]) => Object.fromEntries(codes.map((c) => [String(c), { $ref: `#/components/responses/E${c}` }]));

const statsQuery = [
  { name: 'range', in: 'query', schema: { type: 'string', enum: ['1d', '7d', '1m', '3m', '1y', 'd', 'w', 'm', 'y'], default: '1m' }, description: '1m = 30 days, 3m = 90 days, 1y = 365 days; ignored (still checked) when from is given' },
  { name: 'from', in: 'query', schema: { type: 'string', format: 'date-time' }, description: 'inclusive start; before to; span at most 2 calendar years' },
  { name: 'to', in: 'query', schema: { type: 'string', format: 'date-time' }, description: 'inclusive end, clamped to as_of; default as_of' },
];

function op(summary: string, scope: string | null, data: unknown, extra: Record<string, unknown> = {}, errs: number[] = []): Record<string, unknown> {
  return {
    summary,
    ...(scope === null ? { security: [] } : { security: [{ bearer: [] }], 'x-required-scope': scope }),
    ...extra,
    responses: { 200: { description: 'success', content: { 'application/json': { schema: data } } }, ...errors(...(scope === null ? [] : [401, 403]), 429, ...errs) },
  };
}

/** The OpenAPI document (servers left relative: the gateway serves it under its own base URL). */
export const OPENAPI = {
  openapi: '3.1.0',
  info: {
    title: 'Tenebra REST API', version: '1.0.0',
    description: 'Perpetual-futures dark pool. Every response carries X-Request-Id, X-RateLimit-Limit, X-RateLimit-Remaining, X-RateLimit-Reset; see docs/api.md.',
  },
  servers: [{ url: API_PREFIX }],
  components: {
    securitySchemes: { bearer: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' } },
    schemas: {
      EnvelopeBase: obj({ code: { type: 'integer', const: 0 }, timestamp: { type: 'string', format: 'date-time' }, request_id: str }),
      Error: obj({ code: int, message: str, error: str, timestamp: str, request_id: str }),
      Token: obj({ access_token: str, token_type: { const: 'Bearer' }, expires_in: int, scope: str }),
      Position: obj({
        position_id: str, symbol: str, side: { enum: ['long', 'short'] }, size: num, entry_price: num, mark_price: num, margin: num,
        leverage: num, unrealized_pnl: num, realized_pnl: num, funding_accrued: num, liquidation_price: num, status: { enum: ['OPEN'] },
        updated_at: { type: 'string', format: 'date-time' },
      }),
      Account: obj({
        user_id: str, environment: { enum: ['production', 'test'] }, currency: { const: 'USDC' }, balance: num, reserved_margin: num,
        free_collateral: num, position_margin: num, unrealized_pnl: num, equity: num, total_deposited: num, total_withdrawn: num, open_orders: int,
        open_positions: int, vip_tier: ref('TierName'), maker_fee_bps: num, taker_fee_bps: num, volume_30d: num,
        config: obj({ leverage: int, margin_mode: { const: 'isolated' }, api_key: str, api_key_scopes: { type: 'array', items: str }, token_scopes: { type: 'array', items: str }, max_open_orders: int, max_open_orders_per_symbol: int, min_order_notional: num }),
        created_at: str,
      }),
      TierName: { enum: ['Core', 'Select', 'Advanced', 'Prime', 'Apex'] },
      TierFees: obj({ maker_fee_bps: num, taker_fee_bps: num, maker_fee_pct: num, taker_fee_pct: num, instant_taker_bonus_pct: num, hourly_taker_bonus_pct: num, min_notional: num }),
      AccountVip: {
        allOf: [ref('TierFees'), obj({
          tier: ref('TierName'), volume_30d: num, volume_window_days: int, volume_tier: ref('TierName'), assigned_tier: ref('TierName'),
          next_tier: { oneOf: [{ type: 'null' }, obj({ tier: ref('TierName'), min_volume_30d: num, volume_needed: num })] }, as_of: str,
          bonuses_received: obj({ instant: num, hourly: num }),
        })],
      },
      VipTiers: obj({ volume_window_days: int, tiers: { type: 'array', items: { allOf: [ref('TierFees'), obj({ tier: ref('TierName'), min_volume_30d: num, limits: { type: 'object' } })] } } }),
      Overview: obj({
        as_of: str, volume_24h: dec, volume: obj({ value: dec, change_24h: dec, change_30d: dec }, ['value']),
        open_interest: obj({ value: dec, change_24h: dec }, ['value']), funding: obj({ value: dec, annualized: dec }, ['value']),
        users: obj({ value: dec }), all_time_volume: dec, all_time_users: dec, monthly_active_users: dec, quarterly_active_users: dec,
      }),
      Series: obj({
        as_of: str, metric: { enum: ['volume', 'oi', 'funding', 'users'] }, granularity: { enum: ['hour', 'day'] },
        points: { type: 'array', items: obj({ t: str, total: dec, by_asset: { type: 'object', additionalProperties: dec } }, ['t', 'total']) },
        cumulative: { type: 'array', items: obj({ t: str, total: dec }) },
      }, ['as_of', 'metric', 'granularity', 'points']),
      Reference: obj({
        symbol: str, status: { enum: ['fresh', 'stale', 'missing'] }, detail: str, mid: { type: ['number', 'null'] }, bid: { type: ['number', 'null'] },
        ask: { type: ['number', 'null'] }, source: { type: ['string', 'null'] }, as_of: { type: ['string', 'null'] },
      }, ['symbol', 'status', 'mid', 'bid', 'ask', 'source', 'as_of']),
      Withdrawal: obj({
        withdrawal_id: str, client_withdrawal_id: { type: ['string', 'null'] }, amount: num, recipient: str, status: { enum: ['pending', 'released'] },
        created_at: str, released_at: { type: ['string', 'null'] }, shielded_pool_total: num,
        block: { oneOf: [{ type: 'null' }, obj({ height: int, hash: str, tx_hash: str, time: str })] },
      }),
      SettlementStatus: obj({
        batch_id: str, status: { enum: ['pending', 'committed'] }, created_at: str, committed_at: { type: ['string', 'null'] }, accounts: int,
        commitments_root: str, shielded_pool_total: num,
        chain: { oneOf: [{ type: 'null' }, obj({ network: str, block_height: int, block_hash: str, tx_hash: str, confirmations: int })] },
        account: { oneOf: [{ type: 'null' }, obj({ leaf_index: int, commitment: str, salt: str, delta_json: str, merkle_proof: { type: 'array' }, delta: { type: 'object' } })] },
      }),
    },
    responses: Object.fromEntries([
      [400, 'invalid_request, unsupported_grant_type, invalid_scope, insufficient_collateral or a trade code'], [401, 'invalid_client, invalid_token, token_expired, token_revoked'],
      [403, 'insufficient_scope, tier_not_eligible'], [404, 'not_found'], [409, 'conflict (a reused client_withdrawal_id) or an order conflict (1414, 1421-1423)'], [429, 'rate_limited (Retry-After set)'], [503, 'VENUE_AT_CAPACITY, SEQUENCER_UNAVAILABLE or RESERVE_EXHAUSTED (1505, degraded mode: placements only)'],
    ].map(([c, d]) => [`E${c}`, { description: d, content: { 'application/json': { schema: ref('Error') } } }])),
  },
  paths: {
    '/auth/token': {
      post: {
        summary: 'exchange credentials for a bearer token', security: [],
        requestBody: { content: { 'application/json': { schema: obj({ grant_type: { const: 'client_credentials' }, client_id: str, client_secret: str, passphrase: str, scope: str }, ['grant_type', 'client_id', 'client_secret', 'passphrase']) } } },
        responses: { 200: { description: 'the bare token object', content: { 'application/json': { schema: ref('Token') } } }, ...errors(400, 401, 429) },
      },
    },
    '/auth/token/revoke': {
      post: {
        summary: 'revoke a token (RFC 7009 style; unknown tokens are a no-op)', security: [],
        requestBody: { content: { 'application/json': { schema: obj({ token: str }) } } },
        responses: { 204: { description: 'revoked (or nothing to revoke)' }, ...errors(400, 429) },
      },
    },
    '/instruments': { get: op('list instruments (ETag = version; If-None-Match gives 304)', null, envelope(obj({ version: int, updated_at: str, instruments: { type: 'array' } }))) },
    '/instruments/{symbol}': { get: op('one instrument', null, envelope({ type: 'object' }), { parameters: [{ name: 'symbol', in: 'path', required: true, schema: str }] }, [404]) },
    '/time': { get: op('server time', 'any', envelope(obj({ server_time: str, server_time_ns: int }))) },
    '/orders': {
      post: op('place an order (see gateway/README.md for the trade codes)', 'trade', envelope(obj({ order_id: str, client_order_id: { type: ['string', 'null'] }, status: str })), {}, [400, 503]),
      get: op('fetch by client_order_id, or list: status=open (oldest first) or status=closed (newest first; docs/api.md "Order history and fills")', 'read', envelope({ oneOf: [{ type: 'object' }, { type: 'array' }] }), { parameters: [
        { name: 'client_order_id', in: 'query', schema: str },
        { name: 'status', in: 'query', schema: { enum: ['open', 'closed'] } },
        { name: 'symbol', in: 'query', schema: str },
        { name: 'since_ns', in: 'query', schema: { type: 'integer', minimum: 0 }, description: 'closed only: out_time_ns >= since_ns' },
        { name: 'limit', in: 'query', schema: { type: 'integer', minimum: 1, maximum: 500, default: 100 }, description: 'closed only' },
      ] }, [400, 404]),
      delete: op('cancel by client_order_id', 'trade', envelope({ type: 'object' }), { parameters: [{ name: 'client_order_id', in: 'query', required: true, schema: str }] }, [404, 503]),
    },
    '/fills': {
      get: op('the caller\'s fills, newest first (extension: docs/api.md "Order history and fills")', 'read', envelope({ type: 'array', items: obj({
        fill_id: str, order_id: str, client_order_id: { type: ['string', 'null'] }, symbol: str, side: { enum: ['buy', 'sell'] }, price: { type: 'number' },
        quantity: { type: 'number' }, fee: { type: 'number' }, liquidity: { enum: ['maker', 'taker'] }, time_ns: int,
      }) }), { parameters: [
        { name: 'symbol', in: 'query', schema: str },
        { name: 'since_ns', in: 'query', schema: { type: 'integer', minimum: 0 }, description: 'time_ns >= since_ns' },
        { name: 'limit', in: 'query', schema: { type: 'integer', minimum: 1, maximum: 500, default: 100 } },
      ] }, [400]),
    },
    '/orders/{orderId}': {
      get: op('fetch an order', 'read', envelope({ type: 'object' }), {}, [404]),
      delete: op('cancel an order', 'trade', envelope({ type: 'object' }), {}, [404, 503]),
    },
    '/positions': { get: op('open positions', 'read', envelope(obj({ positions: { type: 'array', items: ref('Position') } }))) },
    '/positions/{symbol}/leverage': {
      get: op('the account\'s leverage on a symbol (extension; docs/api.md)', 'read', envelope(obj({ symbol: str, leverage: int, max_leverage: int })), { parameters: [{ name: 'symbol', in: 'path', required: true, schema: str }] }, [404]),
      post: {
        ...op('set the account\'s leverage on a symbol, for new orders and its isolated position (extension); above max_leverage: 1406 LEVERAGE_EXCEEDED', 'trade', envelope(obj({ symbol: str, leverage: int, max_leverage: int })), { parameters: [{ name: 'symbol', in: 'path', required: true, schema: str }] }, [400, 404]),
        requestBody: { content: { 'application/json': { schema: obj({ leverage: { type: 'integer', minimum: 1 } }) } } },
      },
    },
    '/positions/{symbol}/margin': {
      post: {
        ...op('add or remove isolated margin on an open position (extension); remove below initial margin: 1410 MARGIN_INSUFFICIENT', 'trade', envelope(ref('Position')), { parameters: [{ name: 'symbol', in: 'path', required: true, schema: str }] }, [400, 404]),
        requestBody: { content: { 'application/json': { schema: obj({ action: { enum: ['add', 'remove'] }, amount: num }) } } },
      },
    },
    '/account': { get: op('balance, VIP tier and account config', 'read', envelope(ref('Account'))) },
    '/account/vip': { get: op('current tier, effective fees, rolling 30-day volume', 'read', envelope(ref('AccountVip'))) },
    '/account/bonuses': {
      get: op('taker bonuses received as a maker: totals, unpaid hourly windows, hourly payouts newest first (extension)', 'read', envelope(obj({
        instant_total: num, hourly_total: num, accruing: { type: 'array' }, payouts: { type: 'array' },
      })), { parameters: [{ name: 'limit', in: 'query', schema: { type: 'integer', minimum: 1, maximum: 100, default: 24 } }] }, [400]),
    },
    '/account/withdrawals': {
      post: {
        ...op('release free collateral to a fresh address on the public chain (extension: the spec leaves the API open)', 'trade', envelope({ allOf: [ref('Withdrawal'), obj({ free_collateral: num })] }), {}, [400, 404, 409]),
        requestBody: { content: { 'application/json': { schema: obj({ amount: num, recipient: { type: 'string', pattern: '^0x[0-9a-fA-F]{40}$' }, client_withdrawal_id: str }, ['amount', 'recipient']) } } },
      },
      get: op('the caller\'s withdrawals, newest first', 'read', envelope(obj({ withdrawals: { type: 'array', items: ref('Withdrawal') } })), { parameters: [{ name: 'limit', in: 'query', schema: { type: 'integer', minimum: 1, maximum: 100, default: 20 } }] }, [400]),
    },
    '/account/withdrawals/{withdrawalId}': {
      get: op('one withdrawal of the caller', 'read', envelope(ref('Withdrawal')), { parameters: [{ name: 'withdrawalId', in: 'path', required: true, schema: str }] }, [404]),
    },
    '/market-data/reference': {
      get: op('the oracle reference of every instrument (the venue\'s market data: a dark pool shows no book)', null, envelope(obj({ references: { type: 'array', items: ref('Reference') } }))),
    },
    '/market-data/reference/{symbol}': {
      get: op('the oracle reference of one instrument', null, envelope(ref('Reference')), { parameters: [{ name: 'symbol', in: 'path', required: true, schema: str }] }, [404]),
    },
    '/system/health': {
      get: op('the venue\'s health, as the WebSocket system_health push (extension): status, causes, live nodes, results backlog, the committee\'s preprocessing and the orders its reserve covers', null, envelope(obj({
        status: { enum: ['ok', 'degraded', 'down'] }, message: str, time_ns: str, live_nodes: num, nodes_total: num, nodes_needed: num, sequencer_link: { type: 'boolean' },
        results_backlog: str, reasons: { type: 'array', items: str }, preprocessing: { enum: ['running', 'idle', 'stopped', 'exhausted'] }, reserve_orders: str,
      }))),
    },
    '/vip/tiers': { get: op('fee schedule of all tiers', null, envelope(ref('VipTiers'))) },
    '/stats/platform/overview': {
      get: op('headline public statistics: the bare overview object, which also carries the envelope members', null, { allOf: [ref('Overview'), envelope(ref('Overview'))] }, { parameters: statsQuery }, [400]),
    },
    '/stats/platform/series': {
      get: op('public statistics time series (bare object plus envelope members)', null, { allOf: [ref('Series'), envelope(ref('Series'))] }, {
        parameters: [
          { name: 'metric', in: 'query', required: true, schema: { enum: ['volume', 'oi', 'funding', 'users'] } }, ...statsQuery,
          { name: 'assets', in: 'query', schema: str, description: 'comma-separated base assets (BTC,ETH) for by_asset' },
        ],
      }, [400]),
    },
    '/settlement/status/{batchId}': {
      get: op('settlement status of a batch, with the caller\'s own commitment opening', 'read', envelope(ref('SettlementStatus')), { parameters: [{ name: 'batchId', in: 'path', required: true, schema: { type: 'string', pattern: '^[1-9][0-9]*$' } }] }, [400, 404]),
    },
    '/settlement/batches': {
      get: op('the caller\'s settlement batches, newest first (extension)', 'read', envelope(obj({ batches: { type: 'array' } })), { parameters: [{ name: 'limit', in: 'query', schema: { type: 'integer', minimum: 1, maximum: 100, default: 20 } }] }, [400]),
    },
  },
} as const;

export function registerDocsRoutes(app: FastifyInstance): void {
  app.get(`${API_PREFIX}/openapi.json`, async (req, reply) => {
    rejectUnknownParams(req.query as Record<string, unknown>, []);
    return sendJson(reply, OPENAPI);
  });
}
