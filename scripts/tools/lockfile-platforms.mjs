// The npm registry mirror reachable here lacks turbo's darwin/windows binaries, so `npm install`
// leaves them out of package-lock.json and `npm ci` then refuses the lockfile as out of sync.
// This adds lockfile entries for those optional, other-platform packages (never installed on Linux)
// so `npm ci` accepts the file. Run it after any `npm install` that rewrites the lockfile:
//   node scripts/tools/lockfile-platforms.mjs
import { readFileSync, writeFileSync } from 'node:fs';

const file = new URL('../../package-lock.json', import.meta.url);
const lock = JSON.parse(readFileSync(file, 'utf8'));
const pkgs = lock.packages;
let added = 0;
for (const entry of Object.values(pkgs)) {
  for (const [dep, version] of Object.entries(entry.optionalDependencies ?? {})) {
    if (!dep.startsWith('@turbo/')) continue;
    const key = `node_modules/${dep}`;
    if (pkgs[key]) continue;
    const os = dep.includes('darwin') ? 'darwin' : 'win32';
    const cpu = dep.endsWith('arm64') ? 'arm64' : 'x64';
    pkgs[key] = { version, dev: true, license: 'MIT', optional: true, os: [os], cpu: [cpu] };
    added++;
  }
}
writeFileSync(file, `${JSON.stringify(lock, null, 2)}\n`);
console.log(added ? `added ${added} other-platform turbo entries to package-lock.json` : 'package-lock.json already complete');
