// The operator token (docs/decisions/0011-link-emulation.md, "Run-time control"): a fresh random
// secret at every start of a cluster, written to <data>/operator-token (mode 0600) for the operator
// and the console, and handed to each committee node in its environment; a node's POST
// /control/links refuses any request without it. A new one per run: a token that leaked dies with
// the run, and the file always holds the one in force.
import { randomBytes } from 'node:crypto';
import { chmodSync, writeFileSync } from 'node:fs';
import { layout } from '@tenebra/config';

/** Makes a new token, writes it to the data folder (owner-only) and returns it. */
export function writeOperatorToken(dataDir: string): string {
  const token = randomBytes(32).toString('base64url');
  const file = layout(dataDir).operatorToken;
  writeFileSync(file, `${token}\n`, { mode: 0o600 });
  chmodSync(file, 0o600); // writeFileSync's mode applies only to a file it creates
  return token;
}
