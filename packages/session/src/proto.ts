// Protobuf codec for proto/session.proto.
//
// Choice: the .proto is parsed at run time with protobufjs (reflection) rather than compiled to static
// code. The .proto file stays the single source of truth (no generated file that can drift from it,
// no protobufjs-cli build step in a repository without builds); protobufjs still generates
// specialised encoders/decoders in memory, so per-frame speed is that of static code. The cost is
// one parse (a few ms) when the module loads. The TypeScript shapes in messages.ts are written by
// hand; test/proto.test.ts checks them field by field against the parsed .proto.
//
// Canonical encoding: protobufjs writes every field that is *set* on the object, even a zero. Proto3
// omits default-valued fields, and the header bytes are GCM associated data that an independent
// encoder must reproduce exactly, so `toWire` drops default values of implicit-presence fields before
// encoding (members of a oneof, including proto3 `optional`, keep explicit presence).
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import protobuf from 'protobufjs';
import { SessionError } from './errors';

/** Absolute file path of proto/session.proto (for other tools that want to load it). */
export const SESSION_PROTO_PATH = fileURLToPath(new URL('../proto/session.proto', import.meta.url));
export const PROTO_PACKAGE = 'tenebra.session.v1';

// protobufjs depends on 'long' and uses it for 64-bit fields; without it 64-bit values lose precision.
const Long = protobuf.util.Long as typeof import('long').default;
if (!Long) throw new Error("protobufjs found no 'long' package: 64-bit fields would lose precision");

const root = protobuf.parse(readFileSync(SESSION_PROTO_PATH, 'utf8'), { keepCase: true }).root;
root.resolveAll();

/** The reflected message type `name` of session.proto. */
export function protoType(name: string): protobuf.Type {
  return root.lookupType(`${PROTO_PACKAGE}.${name}`);
}

/** The reflected enum `name` of session.proto. */
export function protoEnum(name: string): protobuf.Enum {
  return root.lookupEnum(`${PROTO_PACKAGE}.${name}`);
}

/**
 * The spec's values of every enum, in the spec's order. Numbering rule: value i of this list is
 * number i + 1, named <ENUM_IN_UPPER_SNAKE>_<VALUE_UPPER_CASED>; number 0 is <ENUM>_UNSPECIFIED.
 */
export const ENUM_SPEC_VALUES = {
  RequestType: ['place', 'cancel', 'modify'],
  MessageType: ['ack', 'order_update', 'position_update', 'system_health'],
  Side: ['buy', 'sell'],
  OrderType: ['market', 'limit', 'peg'],
  TimeInForce: ['GTC', 'GTT', 'IOC', 'FOK'],
  PegReference: ['mid', 'bid', 'ask'],
  OrderStatus: ['NEW', 'PARTIALLY_FILLED', 'FILLED', 'CANCELLED', 'REJECTED'],
  OrderEventType: ['open', 'partial_fill', 'filled', 'cancelled', 'rejected', 'modified', 'cancel_rejected', 'modify_rejected'],
  PositionUpdateReason: ['fill', 'mark_price', 'funding', 'liquidation', 'closed', 'settlement', 'margin'],
} as const;
export type EnumName = keyof typeof ENUM_SPEC_VALUES;

/** The proto value name of spec value `value` of enum `enumName` (e.g. RequestType/place → REQUEST_TYPE_PLACE). */
export function enumValueName(enumName: string, value: string): string {
  const prefix = enumName.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toUpperCase();
  return `${prefix}_${value.toUpperCase().replace(/[^A-Z0-9]/g, '_')}`;
}

function specValues(e: protobuf.Enum): readonly string[] {
  const values = (ENUM_SPEC_VALUES as Record<string, readonly string[]>)[e.name];
  if (!values) throw new Error(`no spec values declared for enum ${e.name}`);
  return values;
}

/** The wire number of a spec enum value (e.g. 'place' → 1). Throws `invalid_frame` for unknown values. */
export function enumNumber(enumName: EnumName, value: string): number {
  const i = (ENUM_SPEC_VALUES[enumName] as readonly string[]).indexOf(value);
  if (i < 0) throw new SessionError('invalid_frame', `'${value}' is not a ${enumName}`);
  return i + 1;
}

/** The spec value of an enum wire number, undefined for 0 (UNSPECIFIED). Throws for unknown numbers. */
export function enumSpecValue(enumName: EnumName, n: number): string | undefined {
  if (n === 0) return undefined;
  const v = (ENUM_SPEC_VALUES[enumName] as readonly string[])[n - 1];
  if (v === undefined) throw new SessionError('invalid_frame', `${n} is not a ${enumName} value`);
  return v;
}

const LONG_TYPES = new Set(['uint64', 'int64', 'sint64', 'fixed64', 'sfixed64']);

function u64Text(v: unknown, where: string): string {
  if (typeof v === 'bigint' && v >= 0n) return v.toString();
  if (typeof v === 'number' && Number.isSafeInteger(v) && v >= 0) return String(v);
  if (typeof v === 'string' && /^(?:0|[1-9][0-9]*)$/.test(v) && BigInt(v) < 1n << 64n) return v;
  throw new SessionError('invalid_frame', `${where} must be an unsigned 64-bit integer`);
}

/** True for the proto3 default of a 32-bit/bool/string/bytes scalar: 0, '', false, empty bytes. */
function isDefaultScalar(v: unknown): boolean {
  return v === 0 || v === '' || v === false || (v instanceof Uint8Array && v.length === 0);
}

/**
 * The protobufjs input object for `obj` (spec enum strings → numbers, 64-bit values → decimal
 * strings), with default values of implicit-presence fields left out. Unknown keys throw.
 */
export function toWire(type: protobuf.Type, obj: Record<string, unknown>, where = type.name): Record<string, unknown> {
  if (obj === null || typeof obj !== 'object') throw new SessionError('invalid_frame', `${where} must be an object`);
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(obj)) {
    if (!type.fields[key]) throw new SessionError('invalid_frame', `${where} has no field '${key}'`);
  }
  for (const field of type.fieldsArray) {
    const v = obj[field.name];
    if (v === undefined || v === null) continue;
    const at = `${where}.${field.name}`;
    let w: unknown;
    const rt = field.resolvedType;
    if (rt instanceof protobuf.Enum) {
      if (typeof v !== 'string') throw new SessionError('invalid_frame', `${at} must be a string`);
      w = enumNumber(rt.name as EnumName, v);
    } else if (rt instanceof protobuf.Type) {
      w = toWire(rt, v as Record<string, unknown>, at);
    } else if (LONG_TYPES.has(field.type)) {
      w = u64Text(v, at);
      // Default check on the text; protobufjs wants a Long for 64-bit fields.
      if (!field.partOf && w === '0') continue;
      w = Long.fromString(w as string, true);
    } else {
      w = v;
    }
    // Real oneof members and proto3 `optional` fields (a synthetic oneof) have explicit presence.
    if (!field.partOf && isDefaultScalar(w)) continue;
    out[field.name] = w;
  }
  const problem = type.verify(out);
  if (problem) throw new SessionError('invalid_frame', `${where}: ${problem}`);
  return out;
}

/** Canonical proto3 bytes of `obj` as message `type` (see toWire). */
export function encodeMessage(type: protobuf.Type, obj: Record<string, unknown>): Uint8Array {
  return type.encode(type.fromObject(toWire(type, obj))).finish();
}

/** The plain object of protobuf bytes: enums as spec strings (UNSPECIFIED omitted), 64-bit as decimal strings. */
export function decodeMessage(type: protobuf.Type, bytes: Uint8Array): Record<string, unknown> {
  let msg: protobuf.Message;
  try {
    msg = type.decode(bytes);
  } catch (e) {
    throw new SessionError('invalid_frame', `${type.name} does not decode: ${(e as Error).message}`);
  }
  const plain = type.toObject(msg, { longs: String, enums: Number, bytes: Uint8Array, defaults: true, oneofs: false });
  return fromWire(type, plain);
}

function fromWire(type: protobuf.Type, plain: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const field of type.fieldsArray) {
    const v = plain[field.name];
    if (v === undefined || v === null) continue;
    const rt = field.resolvedType;
    if (rt instanceof protobuf.Enum) {
      const s = enumSpecValue(rt.name as EnumName, v as number);
      if (s !== undefined) out[field.name] = s;
    } else if (rt instanceof protobuf.Type) {
      out[field.name] = fromWire(rt, v as Record<string, unknown>);
    } else {
      out[field.name] = v;
    }
  }
  return out;
}

/** Checks that every enum in session.proto follows the numbering rule; throws on the first deviation. */
export function assertEnumNumbering(): void {
  for (const name of Object.keys(ENUM_SPEC_VALUES)) {
    const e = protoEnum(name);
    const expected: Record<string, number> = { [enumValueName(name, 'UNSPECIFIED')]: 0 };
    specValues(e).forEach((v, i) => (expected[enumValueName(name, v)] = i + 1));
    const actual = e.values;
    const a = JSON.stringify(Object.entries(actual).sort());
    const b = JSON.stringify(Object.entries(expected).sort());
    if (a !== b) throw new Error(`enum ${name} does not follow the numbering rule: ${a} != ${b}`);
  }
}
