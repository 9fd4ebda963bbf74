// Exact JSON writer (bigints and RawNumber decimals as literals), shared with the client SDK.
export { RawNumber, num, stringifyJson as stringify } from '@tenebra/config';
