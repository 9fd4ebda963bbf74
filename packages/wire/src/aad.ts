// Associated data that binds each sealed blob to its place in the protocol, so a blob cannot be
// replayed into another operation, sequence number or node. Gateway and nodes must use these same
// bytes (they live here, in the one package both depend on).
import { utf8 } from '@tenebra/seal';

/** AAD of a node's sealed input shares: binds kind, order id and symbol. */
export function opAad(kind: string, orderId: string, symbol: string): Uint8Array {
  return utf8(`tenebra-op-v1|${kind}|${orderId}|${symbol}`);
}

/** AAD of a node's sealed output shares: binds the sequence number and the node. */
export function resultAad(seq: string, node: number): Uint8Array {
  return utf8(`tenebra-result-v1|${seq}|${node}`);
}
