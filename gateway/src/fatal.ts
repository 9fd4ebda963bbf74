// How the gateway process ends on a fatal error: like kill -9, never through process.exit
// (`@tenebra/config`'s crash.ts says why; test/fatal-exit.test.ts reproduces the hang it avoids).
export { crash, crashOnUncaught } from '@tenebra/config';
