import './polyfill';
export * from './types';
export * from './simnet';
export { Prng } from './prng';
