/**
 * The per-message path through libp2p's stack without its per-layer bookkeeping, for the messages
 * whose handling by the library is a fixed sequence of steps. Same bytes on the wire, same state
 * afterwards; only the work in between is cut.
 *
 * A message we send crosses three @libp2p/utils AbstractMessageStreams (our Yamux stream, the Noise
 * connection, the TCP connection). At each, send() appends to a write buffer (Uint8ArrayList), takes
 * a sublist, copies it into another list, consumes the buffer and calls the layer's sendData; Yamux
 * wraps header and data in one more list, Noise builds an output list of [length, ciphertext]. When
 * all three buffers are empty and nothing waits for 'drain', that ends in one `socket.write` of
 * [2-byte length | encrypt(12-byte Yamux data header | data)] (lean-noise joins the pieces): `sendDirect`
 * writes exactly that, updating the Yamux send window and the Noise nonce (the library's own
 * encrypt) as the library would, and marks the layers' `writableNeedsDrain` as the library does when
 * the socket reports a full buffer. Anything else (a stream not yet established, a window too small,
 * a layer holding data or waiting for drain, a message larger than one Noise message) goes the
 * library's way.
 *
 * A received chunk is handed up the same three layers, and at each the layer appends it to a read
 * buffer, takes a sublist, consumes the buffer and dispatches a StreamMessageEvent through Node's
 * EventTarget to the one listener above (Noise's decrypter, the muxer's demultiplexer, our frame
 * decoder). `readDirect` hooks each layer's `onData`: when the layer is readable, holds no unread
 * data and has exactly that one listener, the chunk goes straight to it, as the event would have
 * brought it; otherwise the library's onData runs.
 *
 * Measured on `bench:floor -- --node` and `bench:orders`: docs/decisions/0034-direct-transport-path.md.
 * Duck-typed on @libp2p/utils 7, @chainsafe/libp2p-yamux 8, @chainsafe/libp2p-noise 17 and
 * @libp2p/tcp 11: on versions without these fields nothing is hooked and the library runs as it is.
 */

/** Yamux: frame type Data, version 0, header length, stream state Established. */
const YAMUX_DATA = 0;
const YAMUX_HEADER_BYTES = 12;
const YAMUX_ESTABLISHED = 3;
/** Noise: the largest ciphertext of one transport message (plaintext + 16-byte tag). */
const NOISE_MAX_MESSAGE = 65_535;
const NOISE_TAG = 16;

/** The AbstractMessageStream fields both paths read. */
interface MessageStream {
  status: string;
  writeStatus: string;
  readStatus: string;
  remoteWriteStatus: string;
  writableNeedsDrain: boolean;
  sendingData: boolean;
  writeBuffer: { byteLength: number };
  readBuffer: { byteLength: number };
  listenerCount(type: string): number;
  onData(data: unknown): void;
  abort(err: Error): void;
  onMuxerNeedsDrain?: () => void;
}
interface YamuxStreamLike extends MessageStream {
  streamId: number;
  state: number;
  sendWindowCapacity: number;
  maxMessageSize?: number;
}
interface NoiseConnLike extends MessageStream {
  handshake: { encrypt(plaintext: Uint8Array): Uint8Array };
  decoder: { decode(data: unknown): Iterable<Uint8Array | { subarray(): Uint8Array }>; buffer?: { byteLength: number } };
  decrypt(chunk: unknown): unknown;
  stream: TcpConnLike;
}
interface TcpConnLike extends MessageStream {
  socket: { write(buf: Uint8Array): boolean; destroyed: boolean };
}
interface MuxerLike {
  status: string;
  streams: MessageStream[];
  maConn: NoiseConnLike;
  onData(data: unknown): void;
  abort(err: Error): void;
  decoder?: { buffer?: { byteLength: number } };
  handleFrame?: (frame: { header: YamuxHeader; data?: Uint8Array }) => void;
}
interface YamuxHeader { type: number; flag: number; streamID: number; length: number }

function isMessageStream<T>(x: T): x is T & MessageStream {
  const s = x as Partial<MessageStream> | null;
  return typeof s === 'object' && s !== null && typeof s.status === 'string' && typeof s.writeStatus === 'string' &&
    typeof s.readStatus === 'string' && typeof s.writableNeedsDrain === 'boolean' && typeof s.sendingData === 'boolean' &&
    typeof s.writeBuffer?.byteLength === 'number' && typeof s.readBuffer?.byteLength === 'number' &&
    typeof s.listenerCount === 'function' && typeof s.onData === 'function' && typeof s.abort === 'function';
}

/** The muxer, Noise connection and TCP connection under a libp2p Connection, if they look as expected. */
export function layersOf(connection: unknown): MuxerLike | undefined {
  const muxer = (connection as { muxer?: Partial<MuxerLike> } | null)?.muxer;
  if (muxer === undefined || muxer === null || typeof muxer.onData !== 'function' || !Array.isArray(muxer.streams) || typeof muxer.status !== 'string') return undefined;
  const noise = muxer.maConn as Partial<NoiseConnLike> | undefined;
  if (!isMessageStream(noise) || typeof noise.handshake?.encrypt !== 'function' || typeof noise.decrypt !== 'function' || typeof noise.decoder?.decode !== 'function') return undefined;
  const tcp = noise.stream as Partial<TcpConnLike> | undefined;
  if (!isMessageStream(tcp) || typeof tcp.socket?.write !== 'function') return undefined;
  return muxer as MuxerLike;
}

/** True when a layer would pass a send() straight through to its sendData (nothing queued, no drain awaited). */
function idleWriter(s: MessageStream): boolean {
  return s.writeStatus === 'writable' && !s.writableNeedsDrain && !s.sendingData && s.writeBuffer.byteLength === 0;
}

/**
 * Sends `data` as one Yamux data frame on `stream`, the way the library would, if every layer is idle;
 * false (nothing done) otherwise. Throws, having aborted the Noise connection, if encryption fails
 * (as the library's send path does).
 */
export type DirectSend = (data: Uint8Array) => boolean;

/** A direct sender for our outbound Yamux `stream` on `connection`, or undefined if the layers are not as expected. */
export function directSender(stream: unknown, connection: unknown): DirectSend | undefined {
  const muxer = layersOf(connection);
  const ys = stream as Partial<YamuxStreamLike>;
  if (muxer === undefined || !isMessageStream(ys) || typeof ys.streamId !== 'number' || typeof ys.state !== 'number' ||
    typeof ys.sendWindowCapacity !== 'number' || !muxer.streams.includes(ys)) return undefined;
  const y = ys as YamuxStreamLike;
  const noise = muxer.maConn;
  const tcp = noise.stream;
  return (data) => {
    const len = data.byteLength;
    if (len === 0 || len + YAMUX_HEADER_BYTES + NOISE_TAG > NOISE_MAX_MESSAGE) return false;
    if (y.status !== 'open' || y.state !== YAMUX_ESTABLISHED || !idleWriter(y) || y.sendWindowCapacity < len ||
      (y.maxMessageSize !== undefined && y.maxMessageSize < len)) return false;
    if (muxer.status !== 'open' || noise.status !== 'open' || tcp.status !== 'open' || !idleWriter(noise) || !idleWriter(tcp) || tcp.socket.destroyed) return false;
    // Yamux data frame (flags 0: the stream is established), as encodeHeader writes it
    // (allocUnsafe: from Node's pool below 4 KB, no zero fill; every byte is written here)
    const pt = Buffer.allocUnsafe(YAMUX_HEADER_BYTES + len);
    pt[0] = 0; // version
    pt[1] = YAMUX_DATA;
    pt[2] = 0; pt[3] = 0; // flags
    const id = y.streamId;
    pt[4] = id >>> 24; pt[5] = id >>> 16; pt[6] = id >>> 8; pt[7] = id;
    pt[8] = len >>> 24; pt[9] = len >>> 16; pt[10] = len >>> 8; pt[11] = len;
    pt.set(data, YAMUX_HEADER_BYTES);
    let ct: Uint8Array;
    try {
      ct = noise.handshake.encrypt(pt);
    } catch (err) {
      const e = err instanceof Error ? err : new Error(String(err));
      noise.abort(e);
      throw e;
    }
    y.sendWindowCapacity -= len;
    // Noise's [2-byte length | ciphertext], in one write (what lean-noise's join hands the socket)
    const wire = Buffer.allocUnsafe(2 + ct.byteLength);
    wire[0] = ct.byteLength >>> 8;
    wire[1] = ct.byteLength & 0xff;
    wire.set(ct, 2);
    if (!tcp.socket.write(wire)) {
      // the socket's buffer is full: the layers wait for its 'drain' as after the library's own write
      tcp.writableNeedsDrain = true;
      noise.writableNeedsDrain = true;
      for (const s of muxer.streams) s.onMuxerNeedsDrain?.();
      y.writableNeedsDrain = true;
    }
    return true;
  };
}

/** Chunks handed straight to the listener above, per layer, in this process (for tests and benches). */
export const directReads = { tcp: 0, noise: 0, stream: 0 };

const HOOKED = Symbol.for('tenebra.readDirect');
type Hooked = MessageStream & { [HOOKED]?: true };

/** Replaces `s.onData` by `direct` while `s` is readable, empty and has one 'message' listener (the one `direct` stands for). */
function hookOnData(s: Hooked, layer: keyof typeof directReads, direct: (data: unknown) => void): void {
  if (s[HOOKED] === true) return;
  const original = s.onData;
  s.onData = function directOnData(this: Hooked, data: unknown): void {
    const len = (data as { byteLength?: number }).byteLength;
    if (this.readStatus === 'readable' && this.remoteWriteStatus !== 'closed' && this.readBuffer.byteLength === 0 && this.listenerCount('message') === 1 && typeof len === 'number' && len > 0) {
      directReads[layer]++;
      direct(data);
    }
    else original.call(this, data);
  };
  s[HOOKED] = true;
}

/** Hooks the TCP and Noise layers of `connection` (once per connection); false if they are not as expected. */
export function readDirectConnection(connection: unknown): boolean {
  const muxer = layersOf(connection);
  if (muxer === undefined) return false;
  const noise = muxer.maConn;
  // The TCP connection's one listener is Noise's decrypter: split the chunk into its length-prefixed
  // messages, decrypt each. Whole messages at the front of a chunk are cut out here when the library's
  // decoder holds nothing; a partial one (and everything while it holds some) goes to that decoder.
  const lengths = noise.decoder.buffer;
  hookOnData(noise.stream, 'tcp', (data) => {
    try {
      let rest = data;
      if (data instanceof Uint8Array && lengths !== undefined && lengths.byteLength === 0) {
        const n = data.byteLength;
        let off = 0;
        while (n - off >= 2) {
          const len = (data[off]! << 8) | data[off + 1]!;
          if (n - off - 2 < len) break;
          const ct = data.subarray(off + 2, off + 2 + len);
          off += 2 + len;
          if (len > 0) noise.onData(noise.decrypt(ct));
        }
        if (off === n) return;
        rest = data.subarray(off);
      }
      for (const buf of noise.decoder.decode(rest)) noise.onData(noise.decrypt(buf));
    } catch (err) {
      noise.abort(err instanceof Error ? err : new Error(String(err)));
    }
  });
  // the Noise connection's one listener is the muxer's demultiplexer
  hookOnData(noise, 'noise', (data) => {
    try {
      demux(muxer, data);
    } catch (err) {
      const e = err instanceof Error ? err : new Error(String(err));
      muxer.abort(e);
      noise.abort(e);
    }
  });
  return true;
}

/**
 * The muxer's onData (Yamux's Decoder, then handleFrame per frame) for a decrypted Noise message:
 * whole frames are parsed here, as decodeHeader does, when the library's decoder holds nothing; a
 * partial frame, a bad version byte, or anything while the decoder holds bytes goes to the library.
 */
function demux(muxer: MuxerLike, data: unknown): void {
  const held = muxer.decoder?.buffer;
  const bufs = (data as { bufs?: unknown[] }).bufs;
  const buf = data instanceof Uint8Array ? data : Array.isArray(bufs) && bufs.length === 1 && bufs[0] instanceof Uint8Array ? bufs[0] : undefined;
  if (buf === undefined || held === undefined || held.byteLength !== 0 || typeof muxer.handleFrame !== 'function') {
    muxer.onData(data);
    return;
  }
  const n = buf.byteLength;
  let off = 0;
  while (n - off >= YAMUX_HEADER_BYTES && buf[off] === 0) {
    const header: YamuxHeader = {
      type: buf[off + 1]!,
      flag: (buf[off + 2]! << 8) + buf[off + 3]!,
      streamID: buf[off + 4]! * 2 ** 24 + (buf[off + 5]! << 16) + (buf[off + 6]! << 8) + buf[off + 7]!,
      length: buf[off + 8]! * 2 ** 24 + (buf[off + 9]! << 16) + (buf[off + 10]! << 8) + buf[off + 11]!,
    };
    if (header.type === YAMUX_DATA) {
      const end = off + YAMUX_HEADER_BYTES + header.length;
      if (end > n) break;
      const frame = { header, data: buf.subarray(off + YAMUX_HEADER_BYTES, end) };
      off = end;
      muxer.handleFrame(frame);
    } else {
      off += YAMUX_HEADER_BYTES;
      muxer.handleFrame({ header });
    }
  }
  if (off < n) muxer.onData(buf.subarray(off));
}

/** Hooks our inbound Yamux `stream` so its data goes straight to `handler` (our one 'message' listener). */
export function readDirectStream(stream: unknown, handler: (data: Uint8Array | { subarray(): Uint8Array }) => void): boolean {
  if (!isMessageStream(stream)) return false;
  hookOnData(stream, 'stream', (data) => {
    try {
      handler(data as Uint8Array | { subarray(): Uint8Array });
    } catch (err) {
      // as from an EventTarget listener: reported, not thrown into the muxer (which would abort the connection)
      process.nextTick(() => { throw err; });
    }
  });
  return true;
}
