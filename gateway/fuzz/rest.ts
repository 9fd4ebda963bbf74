// REST fuzzing through fastify.inject (in-process, no sockets): every route of the route table with
// hostile bodies, query strings, path parameters and headers, as a stranger holding one account's
// token (never the admin secret). Each answer is checked (verdict.ts); after every refused input that
// could write (POST, PATCH, PUT, DELETE), the account's state must be what it was before.
import fc from 'fast-check';
import type { Gateway } from '../src/gateway';
import { ADMIN_SECRET_HEADER } from '../src/http/routes-admin';
import { restProblems, type Tally } from './verdict';

export interface RestTarget {
  gw: Gateway;
  userId: string;
  /** the account's current valid token (renewed by the campaign as its clock moves) */
  token: () => string;
  /** the account's state as a comparable text (balance, reservations, positions, orders) */
  fingerprint: () => Promise<string>;
}

export interface RestInput {
  method: string;
  url: string;
  headers: Record<string, string>;
  payload?: string;
}

// SSE streams answer 200 and never end; their refusals are covered in test/edge.test.ts.
const STREAM_ROUTES = /\/events\/(stats|notifications)$/;
const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'HEAD', 'TRACE'];
const SYMBOLS = ['ETH-USDC-PERP', 'BTC-USDC-PERP', 'eth-usdc-perp', 'XYZ-USDC-PERP', ''];
const KEYS = ['symbol', 'side', 'type', 'quantity', 'price', 'time_in_force', 'client_order_id', 'reduce_only', 'post_only',
  'stop_price', 'leverage', 'legs', 'order_id', 'grant_type', 'client_id', 'client_secret', 'passphrase', 'scope', 'token',
  'amount', 'recipient', 'tier', 'deposit', 'status', '__proto__', 'constructor', 'prototype', 'limit', 'range', 'from', 'to', 'metric'];

const text = fc.oneof(
  fc.string({ maxLength: 24 }),
  fc.string({ unit: 'grapheme', maxLength: 12 }),
  fc.constantFrom('', ' ', '0', '-1', '1e309', 'NaN', 'Infinity', '0x10', '%00', '../..', '\u0000', '\ud800', 'null', 'true', '[]', '{}', '9'.repeat(40), 'a'.repeat(300)),
);
const num = fc.oneof(
  fc.integer(), fc.double(), fc.constantFrom(0, -0, 1e-9, 1e21, Number.MAX_SAFE_INTEGER + 2, 0.30000000000000004, 3000, 0.5, 2 ** 32),
);
const scalar = fc.oneof(text, num, fc.boolean(), fc.constant(null));
const jsonish: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
  v: fc.oneof({ depthSize: 'small', withCrossShrink: true }, scalar, fc.array(tie('v'), { maxLength: 4 }), fc.dictionary(fc.oneof(fc.constantFrom(...KEYS), text), tie('v'), { maxKeys: 5 })),
})).v;

/** A valid limit order, then each field replaced, dropped or joined by a stranger field. */
const orderBody = fc.record({
  symbol: fc.constantFrom(...SYMBOLS), side: fc.constantFrom('buy', 'sell', 'BUY', 'x'), type: fc.constantFrom('limit', 'market', 'stop', 'peg', 'x'),
  quantity: fc.oneof(fc.constantFrom(0.5, '0.5', 0.01), num, text), price: fc.oneof(fc.constantFrom(3000, '3000', 2999.5), num, text),
  time_in_force: fc.constantFrom('GTC', 'IOC', 'FOK', 'GTD', 'x'),
}, { requiredKeys: [] }).chain((o) => fc.tuple(fc.constant(o), fc.option(fc.tuple(fc.constantFrom(...KEYS), jsonish), { nil: undefined }))
  .map(([base, extra]) => (extra ? { ...base, [extra[0]]: extra[1] } : base)));

const body: fc.Arbitrary<string | undefined> = fc.oneof(
  { weight: 3, arbitrary: orderBody.map((o) => JSON.stringify(o)) },
  { weight: 2, arbitrary: jsonish.map((v) => JSON.stringify(v) ?? 'null') },
  { weight: 1, arbitrary: text },
  { weight: 1, arbitrary: fc.constantFrom('{', '{"a":', '[1,2', '{"__proto__":{"admin":true}}', '{"constructor":{"prototype":{"x":1}}}', '\u0000', '{"a":1,"a":2}', `${'['.repeat(5000)}`) },
  { weight: 1, arbitrary: fc.constant(undefined) },
  { weight: 1, arbitrary: fc.dictionary(fc.constantFrom(...KEYS), text, { maxKeys: 6 }).map((d) => new URLSearchParams(d).toString()) },
);

const queryPair = fc.tuple(fc.oneof(fc.constantFrom(...KEYS, 'client_order_id', 'limit', 'ticket', 'last_event_id', 'zz'), text), text);
const query = fc.oneof(
  fc.constant(''),
  fc.array(queryPair, { maxLength: 4 }).map((ps) => (ps.length ? `?${new URLSearchParams(ps).toString()}` : '')),
  fc.constantFrom('?', '?&', '?a', '?a=1&a=2', '?%zz', '?client_order_id=a&client_order_id=b', '?limit=0', '?limit=99999999', '?__proto__[x]=1', '?a[b]=c'),
);

/** Printable header text (node refuses control bytes in header values before they leave the client). */
const headerText = fc.string({ maxLength: 40 }).map((s) => s.replace(/[^\x20-\x7e]/g, '?'));

export function restInput(routes: { method: string; url: string }[], token: () => string): fc.Arbitrary<RestInput> {
  const targets = routes.filter((r) => r.method !== 'HEAD' && !STREAM_ROUTES.test(r.url));
  const param = fc.oneof(fc.constantFrom('1', '0', '-1', '18446744073709551616', 'ETH-USDC-PERP', 'co-1', '0x0000000000000000000000000000000000000000', '%2e%2e', 'x'.repeat(200)), text.map(pctEncode));
  const auth = fc.oneof(
    { weight: 6, arbitrary: fc.constant('valid') },
    { weight: 1, arbitrary: fc.constant('none') },
    { weight: 2, arbitrary: fc.constantFrom('flip', 'truncate', 'scheme', 'garbage', 'alg-none', 'tail') },
  );
  const ctype = fc.oneof(
    { weight: 5, arbitrary: fc.constant('application/json') },
    { weight: 1, arbitrary: fc.constantFrom('application/x-www-form-urlencoded', 'text/plain', 'application/json; charset=utf-16', 'multipart/form-data; boundary=x', 'application/JSON', '', 'none') },
    { weight: 1, arbitrary: headerText },
  );
  const extra = fc.dictionary(
    fc.constantFrom('if-none-match', 'last-event-id', 'x-forwarded-for', 'accept', 'accept-encoding', 'origin', 'x-request-id', 'content-encoding', ADMIN_SECRET_HEADER),
    headerText, { maxKeys: 3 },
  );
  return fc.record({
    route: fc.constantFrom(...targets), method: fc.option(fc.constantFrom(...METHODS), { freq: 8, nil: undefined }),
    params: fc.array(param, { minLength: 4, maxLength: 4 }), query, auth, ctype, extra, body,
  }).map(({ route, method, params, query: q, auth: a, ctype: ct, extra: ex, body: b }) => {
    let i = 0;
    const path = route.url.replace(/:\w+/g, () => params[i++]!);
    const headers: Record<string, string> = { ...ex };
    const tok = token();
    const mutated = mutateToken(tok, a);
    if (mutated !== null) headers.authorization = mutated;
    if (ct !== 'none') headers['content-type'] = ct;
    const m = method ?? route.method;
    return { method: m, url: `${path}${q}`, headers, ...(b !== undefined && m !== 'GET' && m !== 'HEAD' ? { payload: b } : {}) };
  });
}

/** Percent-encodes every byte of the UTF-8 text (lone surrogates become U+FFFD, as a client's encoder would). */
function pctEncode(s: string): string {
  return [...Buffer.from(s, 'utf8')].map((b) => `%${b.toString(16).padStart(2, '0')}`).join('');
}

function mutateToken(tok: string, how: string): string | null {
  switch (how) {
    case 'valid': return `Bearer ${tok}`;
    case 'none': return null;
    case 'flip': {
      const i = tok.length - 10;
      return `Bearer ${tok.slice(0, i)}${tok[i] === 'A' ? 'B' : 'A'}${tok.slice(i + 1)}`;
    }
    case 'truncate': return `Bearer ${tok.slice(0, -1)}`;
    case 'tail': return `Bearer ${tok.slice(0, -1)}${tok.endsWith('A') ? 'B' : 'A'}`;
    case 'scheme': return `Basic ${tok}`;
    case 'alg-none': {
      const [, payload] = tok.split('.');
      return `Bearer ${Buffer.from('{"alg":"none","typ":"JWT"}').toString('base64url')}.${payload}.`;
    }
    default: return 'Bearer a.b.c';
  }
}

const WRITES = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/** Runs one input and checks its answer and, when refused, that the account did not change. */
export async function runRestInput(t: RestTarget, input: RestInput, tally: Tally): Promise<void> {
  const before = WRITES.has(input.method) ? await t.fingerprint() : null;
  let res;
  try {
    res = await t.gw.app.inject({ method: input.method as 'GET', url: input.url, headers: input.headers, ...(input.payload !== undefined ? { payload: input.payload } : {}) });
  } catch (e) {
    tally.fail('rest', `inject threw: ${(e as Error).message}`, input);
    tally.count('rest', true);
    return;
  }
  const refused = res.statusCode >= 400;
  tally.count('rest', refused);
  for (const p of restProblems(res.statusCode, res.headers, res.body, input.method === 'HEAD')) tally.fail('rest', `${input.method} ${input.url.split('?')[0]} -> ${res.statusCode}: ${p}`, { ...input, answer: res.body.slice(0, 200) });
  if (refused && before !== null) {
    const after = await t.fingerprint();
    if (after !== before) tally.fail('rest', `state changed by a refused ${res.statusCode}`, { ...input, before, after });
  }
}
