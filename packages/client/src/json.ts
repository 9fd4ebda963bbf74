// Exact JSON (numbers never through a float) lives in @tenebra/config, shared with the gateway.
export { RawNumber, parseJson, stringifyJson } from '@tenebra/config';
