export * from './instruments';
export * from './cluster';
export * from './exact-json';
export * from './crash';
export * from './dealer';
export * from './outage';
export * from './op-trace';
