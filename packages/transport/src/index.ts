import './polyfill';
export * from './types';
export * from './simnet';
export { Prng } from './prng';
export * from './libp2p';
export { FrameDecoder, FrameError, FrameKind, frameHeader, FRAME_HEADER_BYTES } from './framing';
export { LinkEmulator, checkLinkEmulation, MAX_EMULATED_LATENCY_MS, type LinkEmulation } from './link-emulation';
export { allocBytes, BytePool, POOLED_MAX_BYTES } from './byte-pool';
export { MAX_UNIX_SOCKET_PATH_BYTES, checkSocketFolder, prepareUnixListen, unixSocketMultiaddr, unixSocketPathOf } from './unix-links';
