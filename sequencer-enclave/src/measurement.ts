// The enclave's measurement (modelled MRENCLAVE): a hash of this folder's source files and of the
// configuration that changes behaviour. Launchers and verifiers call expectedMeasurement() on the
// same config and get the value the running enclave puts in its quote.
import { readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { measureFiles } from '@tenebra/seal';
import type { SequencerConfig } from '@tenebra/config';

/** The code files measured: every .ts file in sequencer-enclave/src. */
export function enclaveSourceFiles(): string[] {
  const dir = dirname(fileURLToPath(import.meta.url));
  return readdirSync(dir)
    .filter((f) => f.endsWith('.ts'))
    .map((f) => join(dir, f));
}

/** The config fields that are measured: all but where data and keys live, how much is logged and where metrics are served. */
export function measuredConfig(config: SequencerConfig): Record<string, unknown> {
  const { dataDir: _d, platformKeyFile: _p, logLevel: _l, metricsPort: _m, ...rest } = config;
  return rest;
}

/** Hex measurement the enclave started from `config` reports in its quote. */
export function expectedMeasurement(config: SequencerConfig): string {
  return measureFiles(enclaveSourceFiles(), measuredConfig(config));
}
