// Accounts: creation with a fresh credential triple (stored only as scrypt hashes), deposits,
// key rotation, and the client_credentials check behind POST /auth/token.
import { randomBytes } from 'node:crypto';
import type { GatewayDb } from './store/db';
import type { GatewayClock } from './clock';
import type { AccountRec, Scope } from './store/records';
import { big, str } from './store/records';
import { hashSecret, verifySecret, randomCredential, DUMMY_HASH } from './auth/secrets';
import type { Tier } from './tiers';
import { ApiError } from './errors';

/** Largest single deposit: 10^12 USDC. */
export const MAX_DEPOSIT_MICRO = 10n ** 18n;
export const MIN_LEVERAGE = 1;
export const MAX_LEVERAGE = 100;

export interface NewAccount {
  tier: Tier;
  leverage: number;
  depositMicro: bigint;
  scopes: Scope[];
  /** chosen by the user; generated when absent */
  passphrase?: string;
}

export interface Credentials {
  user_id: string;
  user_uuid: string;
  api_key: string;
  api_secret: string;
  passphrase: string;
}

export class AccountService {
  constructor(
    private readonly db: GatewayDb,
    private readonly clock: GatewayClock,
  ) {}

  /** Creates an account and returns its credentials (the only time the secret and passphrase exist in clear). */
  async create(input: NewAccount): Promise<Credentials> {
    const passphrase = input.passphrase ?? randomCredential('pp_', 15);
    const api_secret = randomCredential('', 32);
    const api_key = `ak_${randomBytes(16).toString('hex')}`;
    const [secret_hash, pass_hash] = await Promise.all([hashSecret(api_secret), hashSecret(passphrase)]);
    const user_id = `0x${randomBytes(20).toString('hex')}`;
    const user_uuid = randomBytes(16).toString('hex');
    const rec: AccountRec = {
      user_id, user_uuid, tier: input.tier, leverage: input.leverage, scopes: [...input.scopes], api_key,
      secret_hash, pass_hash, balance: str(input.depositMicro), reserved: '0', open_orders: 0, open_by_symbol: {},
      deposited: str(input.depositMicro), created_at: new Date(this.clock.nowMs()).toISOString(),
    };
    this.db.tx(() => {
      if (this.db.accounts.get(user_id) !== undefined || this.db.apiKeys.get(api_key) !== undefined) {
        throw new Error('random identifier collision'); // 160/128-bit random ids: never in practice
      }
      this.db.accounts.putSync(user_id, rec);
      this.db.apiKeys.putSync(api_key, user_id);
    });
    return { user_id, user_uuid, api_key, api_secret, passphrase };
  }

  /** The account, or undefined. */
  get(userId: string): AccountRec | undefined {
    return this.db.accounts.get(userId);
  }

  /** Credits amountMicro to the balance; a repeated depositId credits nothing and returns the account. */
  deposit(userId: string, amountMicro: bigint, depositId?: string): { account: AccountRec; credited: boolean } {
    if (amountMicro <= 0n || amountMicro > MAX_DEPOSIT_MICRO) throw new ApiError('invalid_request', 'amount must be > 0 and at most 1e12 USDC');
    return this.db.tx(() => {
      const acct = this.db.accounts.get(userId);
      if (!acct) throw new ApiError('not_found', `no account ${userId}`);
      if (depositId !== undefined) {
        const prior = this.db.deposits.get(depositId);
        if (prior) {
          if (prior.user_id !== userId || prior.amount !== str(amountMicro)) {
            throw new ApiError('invalid_request', `deposit_id ${depositId} was already used for another deposit`);
          }
          return { account: acct, credited: false };
        }
        this.db.deposits.putSync(depositId, { deposit_id: depositId, user_id: userId, amount: str(amountMicro), at: new Date(this.clock.nowMs()).toISOString() });
      }
      const next: AccountRec = { ...acct, balance: str(big(acct.balance) + amountMicro), deposited: str(big(acct.deposited) + amountMicro) };
      this.db.accounts.putSync(userId, next);
      return { account: next, credited: true };
    });
  }

  /** Replaces the credential triple; the old api_key stops working at once. Tokens already issued stay valid until they expire or are revoked. */
  async rotate(userId: string, passphrase?: string): Promise<Credentials> {
    const acct = this.db.accounts.get(userId);
    if (!acct) throw new ApiError('not_found', `no account ${userId}`);
    const newPass = passphrase ?? randomCredential('pp_', 15);
    const api_secret = randomCredential('', 32);
    const api_key = `ak_${randomBytes(16).toString('hex')}`;
    const [secret_hash, pass_hash] = await Promise.all([hashSecret(api_secret), hashSecret(newPass)]);
    this.db.tx(() => {
      const cur = this.db.accounts.get(userId)!;
      this.db.apiKeys.removeSync(cur.api_key);
      this.db.apiKeys.putSync(api_key, userId);
      this.db.accounts.putSync(userId, { ...cur, api_key, secret_hash, pass_hash });
    });
    return { user_id: userId, user_uuid: acct.user_uuid, api_key, api_secret, passphrase: newPass };
  }

  /** The account whose api_key, api_secret and passphrase all match, or null (same work either way). */
  async authenticate(apiKey: string, apiSecret: string, passphrase: string): Promise<AccountRec | null> {
    const userId = this.db.apiKeys.get(apiKey);
    const acct = userId === undefined ? undefined : this.db.accounts.get(userId);
    const [secretOk, passOk] = await Promise.all([
      verifySecret(apiSecret, acct?.secret_hash ?? DUMMY_HASH),
      verifySecret(passphrase, acct?.pass_hash ?? DUMMY_HASH),
    ]);
    return acct && secretOk && passOk ? acct : null;
  }
}
