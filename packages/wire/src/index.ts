export * from './messages';
export * from './codec';
export { AttestedSocket, stderrLogger, type AttestedOptions, type ClientAuth, type WireLogger } from './attested-socket';
export {
  LINK_AUTH_CONTEXT, CLOSE_AUTH_REFUSED, CLOSE_SUPERSEDED, LinkAuthError, LinkKeyDirectory, ConnectionChallenge,
  linkAuthMessage, signLinkAuth, authFrame, resultsHello, gatewayResultsProof, checkGatewayResultsProof, claimOfHello, claimOfAuth, principalName, refuseLink,
  RESULTS_SERVER, sequencerServerName,
  type LinkAuthCode, type LinkClaim, type LinkIdentity, type LinkPolicy,
} from './link-auth';
export {
  SequencerClient, SequencerNackError, SequencerBusyError, SequencerClosedError,
  type SequencerClientOptions, type SubmitResult,
} from './sequencer-client';
export { SequencerFeed, type SequencerFeedOptions } from './sequencer-feed';
export { AttestationError } from '@tenebra/seal';
export { opAad, resultAad } from './aad';
export { sendCorked } from './cork';
