// @tenebra/ccxt: Tenebra as a CCXT exchange (REST) and a CCXT pro exchange (WebSocket watch methods).
export { default as tenebra } from './tenebra';
export { default as tenebrapro } from './pro/tenebra';
