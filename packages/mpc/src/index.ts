// @tenebra/mpc: modules in dependency order (field -> closure -> shamir -> prss -> messages -> runtime ->
// protocols -> preprocessing -> recovery).
export * from './api';
/** All field arithmetic as a namespace: F.add, F.mul, F.inv, ... */
export * as F from './field';
export {
  P,
  P_BITS,
  DEFAULT_L,
  DEFAULT_KAPPA,
  ELEMENT_BYTES,
  FieldError,
  toSigned,
  fromSigned,
  isElement,
  assertElements,
  encodeFieldVector,
  decodeFieldVector,
  comparisonBits,
  comparisonBound,
  assertComparisonFits,
  maskGrowthBits,
} from './field';
export * from './shamir';
export * from './prss';
export * from './messages';
export { Reserve, KINDS, WIDTH, NIBBLE_WIDTH, TRIPLE_WIDTH, type Kind, type Counts, type Items } from './reserve';
export { Preprocessor, productionQuorum, DEALER_LABEL, nibblesFrom, seededRng, type PreprocessingOptions, type Needs } from './preprocessing';
export { costOf, geometry, PREPROCESSING_TABLE, type OpCost } from './protocols';
export { LEX4, PROD4, FAN_IN, type ClosureShape } from './closure';
export { createParty, SHARE_FANOUTS, type Party, type PartyOptions, type PartyStatus, type JobProgress, type PartyEvent, type ShareFanout } from './runtime';
export { RECOVERY_PART_ELEMENTS } from './recovery';
export type { SplitState, ChunkRef, PrepLog } from './state';
export { prepLogOf } from './state';
