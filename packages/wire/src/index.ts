export * from './messages';
export * from './codec';
export { AttestedSocket, stderrLogger, type AttestedOptions, type WireLogger } from './attested-socket';
export {
  SequencerClient, SequencerNackError, SequencerBusyError, SequencerClosedError,
  type SequencerClientOptions, type SubmitResult,
} from './sequencer-client';
export { SequencerFeed, type SequencerFeedOptions } from './sequencer-feed';
export { AttestationError } from '@tenebra/seal';
export { opAad, resultAad } from './aad';
