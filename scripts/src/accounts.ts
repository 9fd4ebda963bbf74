// Accounts CLI: talks to a running gateway's admin routes (loopback + admin secret).
//   npm run accounts -- [--data DIR | --env test] create --tier <Core|Select|Advanced|Prime|Apex> --deposit <USDC> [--leverage N] [--passphrase P] [--scopes trade,read]
//   npm run accounts -- [--data DIR | --env test] deposit --user <user_id> --amount <USDC> [--deposit-id ID]
//   npm run accounts -- [--data DIR | --env test] rotate --user <user_id> [--passphrase P]
//   npm run accounts -- [--data DIR | --env test] tier --user <user_id> --tier <Core|...|Apex>   (assigned floor tier)
//   npm run accounts -- [--data DIR | --env test] show --user <user_id>
// --env picks the environment's default data folder (./data for production, ./data-test for test),
// as `npm start -- --env` does; each environment has its own accounts, credentials and balances.
// Prints exactly one JSON object on stdout; errors go to stderr with exit code 1.
import { readFileSync, existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseFlags } from './flags';

const TIERS = ['Core', 'Select', 'Advanced', 'Prime', 'Apex'];
const USAGE = `usage: npm run accounts -- [--data DIR | --env production|test] <command> [options]
  create  --tier <${TIERS.join('|')}> --deposit <USDC> [--leverage N] [--passphrase P] [--scopes trade,read]
  deposit --user <user_id> --amount <USDC> [--deposit-id ID]
  rotate  --user <user_id> [--passphrase P]      new api_key, api_secret and passphrase; the old key stops working
  tier    --user <user_id> --tier <${TIERS.join('|')}>   assigned (floor) fee tier; 30-day volume can raise it
  show    --user <user_id>`;

class CliError extends Error {}

interface AdminTarget {
  adminUrl: string;
  secret: string;
}

/** Reads DIR/cluster.json for the gateway's admin URL and secret, failing with a clear message. */
export function adminTarget(dataDir: string): AdminTarget {
  const file = join(resolve(dataDir), 'cluster.json');
  if (!existsSync(file)) throw new CliError(`no cluster found: ${file} does not exist (start one with \`npm start -- --data ${dataDir}\`)`);
  let cluster: unknown;
  try {
    cluster = JSON.parse(readFileSync(file, 'utf8'));
  } catch (e) {
    throw new CliError(`${file} is not valid JSON: ${(e as Error).message}`);
  }
  const gw = (cluster as { gateway?: { adminUrl?: unknown; adminSecretFile?: unknown } } | null)?.gateway;
  if (!gw || typeof gw.adminUrl !== 'string' || typeof gw.adminSecretFile !== 'string') {
    throw new CliError(`${file} has no gateway.adminUrl / gateway.adminSecretFile; is the cluster started?`);
  }
  let secret: string;
  try {
    secret = readFileSync(gw.adminSecretFile, 'utf8').trim();
  } catch (e) {
    throw new CliError(`cannot read the admin secret ${gw.adminSecretFile}: ${(e as Error).message}`);
  }
  const adminUrl = gw.adminUrl.replace(/\/+$/, '');
  return { adminUrl: /\/admin$/.test(adminUrl) ? adminUrl : `${adminUrl}/admin`, secret };
}

async function admin(t: AdminTarget, method: string, path: string, body?: unknown): Promise<Record<string, unknown>> {
  let res: Response;
  try {
    res = await fetch(`${t.adminUrl}${path}`, {
      method,
      headers: { 'x-admin-secret': t.secret, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
  } catch (e) {
    throw new CliError(`cannot reach the gateway at ${t.adminUrl}: ${(e as Error).message} (is the cluster running?)`);
  }
  const text = await res.text();
  let env: { code?: unknown; data?: Record<string, unknown>; message?: unknown };
  try {
    env = JSON.parse(text) as typeof env;
  } catch {
    throw new CliError(`the gateway answered ${res.status} with a non-JSON body`);
  }
  if (!res.ok || env.code !== 0 || !env.data) throw new CliError(`the gateway refused: ${res.status} ${String(env.message ?? text)}`);
  return env.data;
}

function need(flags: Map<string, string>, name: string): string {
  const v = flags.get(name);
  if (v === undefined || v === '') throw new CliError(`--${name} is required\n${USAGE}`);
  return v;
}

/** Runs the CLI on argv (without node and script); returns the JSON object to print. */
export async function run(argv: string[]): Promise<Record<string, unknown>> {
  const f = parseFlags(argv, ['data', 'env', 'tier', 'deposit', 'leverage', 'passphrase', 'scopes', 'user', 'amount', 'deposit-id'], ['help']);
  if (f.bool.has('help') || f.positional.length === 0) throw new CliError(USAGE);
  if (f.positional.length > 1) throw new CliError(`unexpected arguments: ${f.positional.slice(1).join(' ')}\n${USAGE}`);
  const cmd = f.positional[0]!;
  const env = f.str.get('env');
  if (env !== undefined && env !== 'production' && env !== 'test') throw new CliError('--env must be production or test');
  if (env !== undefined && f.str.has('data')) throw new CliError('give either --data or --env, not both');
  const target = () => adminTarget(f.str.get('data') ?? (env === 'test' ? './data-test' : './data'));
  switch (cmd) {
    case 'create': {
      const tier = need(f.str, 'tier');
      if (!TIERS.includes(tier)) throw new CliError(`--tier must be one of ${TIERS.join(', ')}`);
      const deposit = need(f.str, 'deposit');
      if (!/^\d+(\.\d{1,6})?$/.test(deposit)) throw new CliError('--deposit must be a USDC amount such as 1000 or 12.5 (at most 6 decimals)');
      const body: Record<string, unknown> = { tier, deposit };
      const lev = f.str.get('leverage');
      if (lev !== undefined) {
        if (!/^\d+$/.test(lev)) throw new CliError('--leverage must be a whole number');
        body.leverage = Number(lev);
      }
      if (f.str.has('passphrase')) body.passphrase = f.str.get('passphrase');
      if (f.str.has('scopes')) body.scopes = f.str.get('scopes')!.split(',').map((s) => s.trim()).filter(Boolean);
      const d = await admin(target(), 'POST', '/accounts', body);
      return { user_id: d.user_id, api_key: d.api_key, api_secret: d.api_secret, passphrase: d.passphrase };
    }
    case 'deposit': {
      const user = need(f.str, 'user');
      const amount = need(f.str, 'amount');
      if (!/^\d+(\.\d{1,6})?$/.test(amount)) throw new CliError('--amount must be a USDC amount such as 1000 or 12.5 (at most 6 decimals)');
      const body: Record<string, unknown> = { amount };
      if (f.str.has('deposit-id')) body.deposit_id = f.str.get('deposit-id');
      return admin(target(), 'POST', `/accounts/${encodeURIComponent(user)}/deposits`, body);
    }
    case 'rotate': {
      const user = need(f.str, 'user');
      const d = await admin(target(), 'POST', `/accounts/${encodeURIComponent(user)}/rotate`, f.str.has('passphrase') ? { passphrase: f.str.get('passphrase') } : {});
      return { user_id: d.user_id, api_key: d.api_key, api_secret: d.api_secret, passphrase: d.passphrase };
    }
    case 'tier': {
      const user = need(f.str, 'user');
      const tier = need(f.str, 'tier');
      if (!TIERS.includes(tier)) throw new CliError(`--tier must be one of ${TIERS.join(', ')}`);
      return admin(target(), 'POST', `/accounts/${encodeURIComponent(user)}/tier`, { tier });
    }
    case 'show':
      return admin(target(), 'GET', `/accounts/${encodeURIComponent(need(f.str, 'user'))}`);
    default:
      throw new CliError(`unknown command '${cmd}'\n${USAGE}`);
  }
}

const isMain = process.argv[1] !== undefined && resolve(process.argv[1]).endsWith(join('scripts', 'src', 'accounts.ts'));
if (isMain) {
  run(process.argv.slice(2)).then(
    (out) => {
      process.stdout.write(`${JSON.stringify(out)}\n`);
    },
    (e: unknown) => {
      process.stderr.write(`accounts: ${e instanceof Error ? e.message : String(e)}\n`);
      process.exitCode = 1;
    },
  );
}
