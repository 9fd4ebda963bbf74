export * from './instruments';
export * from './cluster';
