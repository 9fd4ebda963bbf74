// @tenebra/session: the byte-exact encrypted WebSocket session shared by the gateway (server side)
// and the client SDK (client side). See README.md for the byte layout and the decisions.
export * from './errors';
export * from './bytes';
export * from './keys';
export * from './nonce';
export * from './proto';
export * from './headers';
export * from './messages';
export * from './cipher';
export * from './setup';
export * from './frames';
