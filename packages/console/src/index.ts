// @tenebra/console: the committee console (issue 23, docs/decisions/0022-console.md).
export { startConsole, type ConsoleOptions, type ConsoleServer } from './server';
export { httpLinkControl, type LinkControl, type LinkSettingsBody } from './links';
export type { ChaosTarget, ProcEvent, ProcRole } from './target';
export type { Snapshot } from './snapshot';
export { reportHtml, type BenchRun } from './report';
