// Bearer tokens: HS256 JWTs (jose) lasting 900 s, bound to one environment three ways: each
// environment signs with its own secret (its own data folder), the audience is `tenebra:<env>`, and
// an `env` claim names it; a token of the other environment is refused as invalid_token. Revocable by
// jti (revocations persist until the token would have expired anyway).
import { SignJWT, jwtVerify, compactVerify, errors as joseErrors } from 'jose';
import { randomBytes } from 'node:crypto';
import type { GatewayDb } from '../store/db';
import type { GatewayClock } from '../clock';
import { SCOPES, type Scope } from '../store/records';

export const TOKEN_TTL_SECONDS = 900;
const ISSUER = 'tenebra-gateway';

export interface TokenClaims {
  userId: string;
  scopes: Scope[];
  jti: string;
  exp: number;
}

export type TokenCheck =
  | { ok: true; claims: TokenClaims }
  | { ok: false; error: 'token_expired' | 'token_revoked' | 'invalid_token'; detail: string };

export interface TokenResponse {
  access_token: string;
  token_type: 'Bearer';
  expires_in: number;
  scope: string;
}

/** Verified tokens remembered (their signature and fixed claims need no second check); oldest dropped past this. */
const VERIFIED_CACHE_MAX = 20_000;

export class TokenService {
  private readonly audience: string;
  /**
   * token text -> claims of a token whose signature, algorithm, issuer, audience and env claim have
   * verified. A hit still checks expiry and revocation (the checks that change with time), so it
   * answers exactly what jwtVerify would; it saves the HMAC (a WebCrypto job on the thread pool,
   * the largest per-request cost of an order before this cache).
   */
  private readonly verified = new Map<string, TokenClaims>();

  constructor(
    private readonly secret: Uint8Array,
    private readonly env: string,
    private readonly db: GatewayDb,
    private readonly clock: GatewayClock,
  ) {
    if (secret.length < 32) throw new Error('JWT secret must be at least 32 bytes');
    this.audience = `tenebra:${env}`;
  }

  /** A fresh token for userId with the given scopes. */
  async issue(userId: string, scopes: Scope[]): Promise<TokenResponse> {
    const iat = Math.floor(this.clock.nowMs() / 1000);
    const scope = scopes.join(' ');
    const access_token = await new SignJWT({ scope, env: this.env })
      .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
      .setSubject(userId)
      .setJti(randomBytes(16).toString('base64url'))
      .setIssuer(ISSUER)
      .setAudience(this.audience)
      .setIssuedAt(iat)
      .setExpirationTime(iat + TOKEN_TTL_SECONDS)
      .sign(this.secret);
    return { access_token, token_type: 'Bearer', expires_in: TOKEN_TTL_SECONDS, scope };
  }

  /** Checks signature, issuer, audience, expiry and revocation. */
  async verify(token: string): Promise<TokenCheck> {
    // A base64url segment's last character carries unused low bits; jose ignores them, so a token with
    // those bits changed would decode to the same signature and pass. Only our exact text is a token.
    // Only canonical texts enter the cache, so a hit needs no canonical check (a third of a hit's cost).
    const hit = this.verified.get(token);
    if (!hit && !isCanonicalCompact(token)) return { ok: false, error: 'invalid_token', detail: 'the bearer token is malformed or its signature does not verify' };
    if (hit) {
      // jose's expiry rule (no clock tolerance): expired when exp <= now, in whole seconds
      if (hit.exp <= Math.floor(this.clock.nowMs() / 1000)) {
        this.verified.delete(token);
        return { ok: false, error: 'token_expired', detail: 'the bearer token is past its lifetime; request a new token' };
      }
      if (this.db.revoked.get(hit.jti) !== undefined) return { ok: false, error: 'token_revoked', detail: 'the bearer token has been revoked; request a new token' };
      return { ok: true, claims: hit };
    }
    try {
      const { payload } = await jwtVerify(token, this.secret, {
        algorithms: ['HS256'], issuer: ISSUER, audience: this.audience, currentDate: new Date(this.clock.nowMs()),
      });
      const claims = toClaims(payload);
      if (!claims) return { ok: false, error: 'invalid_token', detail: 'the bearer token lacks required claims' };
      if (payload.env !== this.env) return { ok: false, error: 'invalid_token', detail: `the bearer token was issued for another environment, not '${this.env}'` };
      if (this.db.revoked.get(claims.jti) !== undefined) return { ok: false, error: 'token_revoked', detail: 'the bearer token has been revoked; request a new token' };
      // Only tokens whose validity depends on nothing but exp are remembered (ours carry no nbf).
      if (payload.nbf === undefined) {
        if (this.verified.size >= VERIFIED_CACHE_MAX) this.verified.delete(this.verified.keys().next().value!);
        this.verified.set(token, claims);
      }
      return { ok: true, claims };
    } catch (e) {
      if (e instanceof joseErrors.JWTExpired) return { ok: false, error: 'token_expired', detail: 'the bearer token is past its lifetime; request a new token' };
      if (e instanceof joseErrors.JWTClaimValidationFailed) {
        return { ok: false, error: 'invalid_token', detail: `the bearer token was not issued for this environment (${e.claim})` };
      }
      return { ok: false, error: 'invalid_token', detail: 'the bearer token is malformed or its signature does not verify' };
    }
  }

  /** Revokes a token of ours (RFC 7009: unknown, malformed or expired tokens are a silent no-op). */
  async revoke(token: string): Promise<void> {
    let payload: Record<string, unknown>;
    try {
      const r = await compactVerify(token, this.secret, { algorithms: ['HS256'] });
      payload = JSON.parse(new TextDecoder().decode(r.payload)) as Record<string, unknown>;
    } catch {
      return;
    }
    if (payload.aud !== this.audience || payload.iss !== ISSUER || payload.env !== this.env) return;
    const claims = toClaims(payload);
    if (!claims || claims.exp <= Math.floor(this.clock.nowMs() / 1000)) return;
    this.db.tx(() => this.db.revoked.putSync(claims.jti, claims.exp));
  }

  /** Drops revocations of tokens that have expired anyway; returns how many. */
  pruneRevoked(): number {
    const now = Math.floor(this.clock.nowMs() / 1000);
    const stale: string[] = [];
    for (const { key, value } of this.db.revoked.getRange()) if (value <= now) stale.push(key);
    if (stale.length) this.db.tx(() => { for (const k of stale) this.db.revoked.removeSync(k); });
    return stale.length;
  }
}

/** True when the token is three base64url segments, each the canonical (unpadded) encoding of its bytes. */
export function isCanonicalCompact(token: string): boolean {
  const parts = token.split('.');
  if (parts.length !== 3) return false;
  return parts.every((p) => p.length > 0 && /^[A-Za-z0-9_-]+$/.test(p) && Buffer.from(p, 'base64url').toString('base64url') === p);
}

function toClaims(p: Record<string, unknown>): TokenClaims | null {
  if (typeof p.sub !== 'string' || typeof p.jti !== 'string' || typeof p.exp !== 'number' || typeof p.scope !== 'string') return null;
  const scopes = p.scope.split(' ').filter((s): s is Scope => (SCOPES as readonly string[]).includes(s));
  return { userId: p.sub, scopes, jti: p.jti, exp: p.exp };
}
