// The gateway's edge against an outsider (issue 25, part 3): malformed HTTP, oversized heads, unknown
// Expect, a missing Host and refused WebSocket upgrades answer the spec's error envelope with
// X-Request-Id and X-RateLimit-* headers; slow requests are bounded in time and connections per
// address in number; only the canonical text of a token authenticates; only the token routes take
// form bodies; no route ignores an unknown query parameter.
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { connect, type Socket } from 'node:net';
import { ADMIN_SECRET_HEADER } from '../src/http/routes-admin';
import { startRig, call, newAccount, bearer, type Rig, type Account } from './harness';

const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

interface RawAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
  /** ms from the first byte sent to the connection's close */
  closedAfterMs: number;
}

/** Sends raw bytes on a fresh TCP connection and reads until the server closes it (or waitMs). */
function raw(port: number, bytes: string | Buffer, waitMs = 8_000): Promise<RawAnswer & { closed: boolean }> {
  return new Promise((resolve, reject) => {
    const s: Socket = connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    const t0 = Date.now();
    let done = false;
    const finish = (closed: boolean) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      s.destroy();
      resolve({ ...parse(Buffer.concat(chunks).toString('latin1')), closedAfterMs: Date.now() - t0, closed });
    };
    const timer = setTimeout(() => finish(false), waitMs);
    s.on('data', (d) => chunks.push(d));
    s.on('close', () => finish(true));
    s.on('error', (e) => (chunks.length ? finish(true) : reject(e)));
    s.write(bytes);
  });
}

function parse(text: string): RawAnswer {
  const head = text.split('\r\n\r\n')[0] ?? '';
  const [statusLine, ...lines] = head.split('\r\n');
  const headers: Record<string, string> = {};
  for (const l of lines) {
    const i = l.indexOf(':');
    if (i > 0) headers[l.slice(0, i).trim().toLowerCase()] = l.slice(i + 1).trim();
  }
  return { status: Number(/^HTTP\/1\.1 (\d{3})/.exec(statusLine ?? '')?.[1] ?? 0), headers, body: text.slice(head.length + 4), closedAfterMs: 0 };
}

/** The spec's error envelope with its headers. */
function expectEnvelope(a: RawAnswer, status: number, error: string): void {
  expect(a.status, `${a.status} ${JSON.stringify(a.headers)} ${a.body}`).toBe(status);
  expect(a.headers['content-type']).toMatch(/^application\/json/);
  expect(a.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
  for (const h of ['x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset']) expect(a.headers[h], h).toMatch(/^\d+$/);
  const b = JSON.parse(a.body) as Record<string, unknown>;
  expect(b.code).toBeTypeOf('number');
  expect(b.code).not.toBe(0);
  expect(b.error).toBe(error);
  expect(String(b.message)).toMatch(new RegExp(`^${error}: .{8,}`));
  expect(b.timestamp).toMatch(ISO_MS);
  expect(b.request_id).toBe(a.headers['x-request-id']);
}

describe('the HTTP edge', () => {
  let rig: Rig;
  let port: number;
  let acct: Account;
  beforeAll(async () => {
    rig = await startRig({
      publicLimits: { perMinute: 100_000, perSecond: 100_000, burst: 100_000 },
      edge: { headersTimeoutMs: 600, requestTimeoutMs: 900, timeoutCheckMs: 100, maxConnectionsPerIp: 40 },
    });
    port = Number(new URL(rig.gw.urls.baseUrl).port);
    acct = await newAccount(rig, 'Apex');
  });
  afterAll(async () => {
    await rig?.close();
  });

  const GOOD = 'GET /api/v1/time HTTP/1.1\r\nHost: x\r\n';

  it('malformed HTTP gets the envelope, not fastify\'s default body', async () => {
    const cases: [string, string][] = [
      ['bad Content-Length', 'POST /api/v1/orders HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n'],
      ['duplicate Content-Length', 'POST /api/v1/orders HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n{}'],
      ['Content-Length with Transfer-Encoding', 'POST /api/v1/orders HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n'],
      ['bad chunk', 'POST /api/v1/orders HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nZZ\r\n{}\r\n0\r\n\r\n'],
      ['control byte in a header', 'GET /api/v1/time HTTP/1.1\r\nHost: x\r\nX-A: a\x01b\r\n\r\n'],
      ['unknown method', 'BREW /api/v1/time HTTP/1.1\r\nHost: x\r\n\r\n'],
      ['not HTTP', 'hello there\r\n\r\n'],
    ];
    for (const [what, bytes] of cases) {
      const a = await raw(port, bytes);
      expect(a.closed, what).toBe(true);
      expectEnvelope(a, 400, 'invalid_request');
    }
  });

  it('oversized headers: 431 with the envelope', async () => {
    const a = await raw(port, `${GOOD}X-Big: ${'a'.repeat(20_000)}\r\n\r\n`);
    expectEnvelope(a, 431, 'headers_too_large');
  });

  it('an unknown Expect: 417 with the envelope', async () => {
    const a = await raw(port, 'POST /api/v1/orders HTTP/1.1\r\nHost: x\r\nExpect: 200-ok\r\nContent-Length: 2\r\n\r\n{}');
    expectEnvelope(a, 417, 'expectation_failed');
  });

  it('an HTTP/1.1 request without Host: 400 with the envelope', async () => {
    const a = await raw(port, 'GET /api/v1/time HTTP/1.1\r\n\r\n');
    expectEnvelope(a, 400, 'invalid_request');
    expect(a.body).toMatch(/Host/);
  });

  it('refused WebSocket upgrades: the envelope with 404, 400 or 405', async () => {
    const up = (method: string, path: string, hdrs: Record<string, string>) =>
      `${method} ${path} HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n${Object.entries(hdrs).map(([k, v]) => `${k}: ${v}\r\n`).join('')}\r\n`;
    const key = { 'Sec-WebSocket-Key': 'dGhlIHNhbXBsZSBub25jZQ==', 'Sec-WebSocket-Version': '13' };
    expectEnvelope(await raw(port, up('GET', '/ws/nowhere', key)), 404, 'not_found');
    const badVersion = await raw(port, up('GET', '/ws/v1', { ...key, 'Sec-WebSocket-Version': '99' }));
    expectEnvelope(badVersion, 400, 'invalid_request');
    expect(badVersion.headers['sec-websocket-version']).toBe('13');
    expectEnvelope(await raw(port, up('GET', '/ws/v1', { ...key, 'Sec-WebSocket-Key': 'short' })), 400, 'invalid_request');
    expectEnvelope(await raw(port, up('GET', '/ws/v1', { ...key, 'Sec-WebSocket-Protocol': 'a,,b' })), 400, 'invalid_request');
    const post = await raw(port, up('POST', '/ws/v1', key));
    expectEnvelope(post, 405, 'method_not_allowed');
    expect(post.headers.allow).toBe('GET');
  });

  it('a body shorter than its Content-Length is answered 408 and closed within the request timeout', async () => {
    const a = await raw(port, `POST /api/v1/orders HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"sym`, 5_000);
    expect(a.closed).toBe(true);
    expect(a.closedAfterMs).toBeLessThan(3_000);
    expectEnvelope(a, 408, 'request_timeout');
  });

  it('an unfinished head is answered 408 and closed within the headers timeout', async () => {
    const a = await raw(port, 'GET /api/v1/time HTTP/1.1\r\nHost: x\r\nX-Slow: 1', 5_000);
    expect(a.closed).toBe(true);
    expect(a.closedAfterMs).toBeLessThan(3_000);
    expectEnvelope(a, 408, 'request_timeout');
  });

  it('connections per address are capped: the one past the cap gets 429 and is closed; others still work', async () => {
    const held: Socket[] = [];
    try {
      for (let i = 0; i < 40; i++) {
        const s = connect(port, '127.0.0.1');
        s.on('error', () => undefined);
        await new Promise<void>((r) => s.once('connect', () => r()));
        held.push(s);
      }
      await new Promise((r) => setTimeout(r, 50));
      const a = await raw(port, `${GOOD}\r\n`);
      expectEnvelope(a, 429, 'rate_limited');
      expect(a.headers['retry-after']).toMatch(/^\d+$/);
    } finally {
      for (const s of held) s.destroy();
    }
    await new Promise((r) => setTimeout(r, 100));
    const ok = await raw(port, `${GOOD}Connection: close\r\n\r\n`);
    expect(ok.status).toBe(401); // /time needs a token: routed as usual again
  });

  it('a token whose last character differs only in its unused bits is refused', async () => {
    const t = acct.token;
    const last = t[t.length - 1]!;
    // a 32-byte HMAC is 43 base64url characters: the last holds 4 bits of data and 2 unused ones
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
    const idx = alphabet.indexOf(last);
    const twins = [1, 2, 3].map((d) => t.slice(0, -1) + alphabet[(idx & ~3) | ((idx + d) & 3)]!);
    expect((await call(rig.gw, 'GET', '/api/v1/time', undefined, bearer(acct))).status).toBe(200);
    for (const tw of twins) {
      expect(Buffer.from(tw.split('.')[2]!, 'base64url').equals(Buffer.from(t.split('.')[2]!, 'base64url'))).toBe(true);
      const r = await call(rig.gw, 'GET', '/api/v1/time', undefined, { authorization: `Bearer ${tw}` });
      expect(r.status, tw).toBe(401);
      expect(r.body.error).toBe('invalid_token');
    }
  });

  it('POST /orders refuses a form body; the token route still takes one', async () => {
    const before = (await call(rig.gw, 'GET', `/admin/accounts/${acct.user_id}`, undefined, { [ADMIN_SECRET_HEADER]: rig.env.adminSecret })).body.data;
    const form = 'symbol=ETH-USDC-PERP&side=buy&type=limit&quantity=0.5&price=3000&time_in_force=GTC';
    const r = await rig.gw.app.inject({ method: 'POST', url: '/api/v1/orders', payload: form, headers: { ...bearer(acct), 'content-type': 'application/x-www-form-urlencoded' } });
    expect(r.statusCode, r.body).toBe(400);
    expect(JSON.parse(r.body)).toMatchObject({ code: 40000, error: 'invalid_request' });
    expect(JSON.parse(r.body).message).toMatch(/application\/json/);
    const after = (await call(rig.gw, 'GET', `/admin/accounts/${acct.user_id}`, undefined, { [ADMIN_SECRET_HEADER]: rig.env.adminSecret })).body.data;
    expect(after).toEqual(before);
    const tok = await rig.gw.app.inject({
      method: 'POST', url: '/api/v1/auth/token', headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams({ grant_type: 'client_credentials', client_id: acct.api_key, client_secret: acct.api_secret, passphrase: acct.passphrase }).toString(),
    });
    expect(tok.statusCode).toBe(200);
  });

  it('every route refuses an unknown query parameter with 400 invalid_request', async () => {
    const routes = rig.gw.app.routeTable.filter((r) => r.method !== 'HEAD' && r.method !== 'OPTIONS');
    expect(routes.length).toBeGreaterThan(30);
    const base = `http://127.0.0.1:${port}`;
    const failures: string[] = [];
    for (const r of routes) {
      const path = r.url.replace(/:(\w+)/g, (_m, name: string) => (name === 'userId' ? acct.user_id : name === 'symbol' ? 'ETH-USDC-PERP' : 'x1'));
      const headers: Record<string, string> = r.url.startsWith('/admin') ? { [ADMIN_SECRET_HEADER]: rig.env.adminSecret } : bearer(acct);
      const res = await fetch(`${base}${path}?zz_unknown=1`, {
        method: r.method, headers: { ...headers, 'content-type': 'application/json' },
        ...(r.method === 'GET' || r.method === 'DELETE' ? {} : { body: '{}' }), signal: AbortSignal.timeout(5_000),
      });
      // a stream that opened (SSE) ignored the parameter: do not wait for its end
      const text = res.status < 300 ? (await res.body?.cancel(), '') : await res.text();
      if (res.status !== 400 || !/unknown query parameter/.test(text)) failures.push(`${r.method} ${r.url}: ${res.status} ${text.slice(0, 120)}`);
    }
    expect(failures).toEqual([]);
  });
});
