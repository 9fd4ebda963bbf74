// @tenebra/sequencer-enclave: the sequencer process, importable for launchers and tests.
export { expectedMeasurement, measuredConfig, enclaveSourceFiles } from './measurement';
export { startSequencer, type RunningSequencer } from './server';
export { clientKeyDirectory, SEQUENCER_LINK_POLICY } from './client-auth';
export { Sequencer, type SubmitOutcome } from './sequencer';
export { LIMITS, KNOWN_KINDS, NACK } from './limits';
export { decodeRecord, type OpRecord } from './record';
