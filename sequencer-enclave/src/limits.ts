// Every bound the sequencer enforces, in one place.
export const LIMITS = {
  /** Largest submit frame accepted, bytes of JSON text; larger ones are nacked FRAME_TOO_LARGE. */
  maxSubmitBytes: 256 * 1024,
  /** ws maxPayload: frames above this close the connection (1009) instead of being nacked. */
  maxPayloadBytes: 1024 * 1024,
  /** Largest base64 text of one sealed share entry. */
  maxSealedB64: 16 * 1024,
  /** Ops taken into one intake group (one journal transaction at most; batch_end on the last). */
  maxGroup: 256,
  /** Ops accepted but not yet durable; beyond this submits are nacked BUSY. */
  maxInFlight: 20_000,
  /**
   * rids remembered for dedupe, rebuilt from the journal tail at start (about 0.4 s per 50,000).
   * Covers 50 s at 1,000 ops/s: far more than a client's pending queue (10,000) can hold back.
   */
  dedupeWindow: 50_000,
  /** Recently journaled ops kept in memory for live fan-out; older ones are read from the journal. */
  recentOps: 8_192,
  /** Bytes queued on a feed socket before we stop sending and wait for it to drain. */
  feedHighWaterBytes: 1024 * 1024,
  /** Journal records read per replay batch. */
  replayBatch: 512,
  /** Connections served at once. */
  maxConnections: 256,
  /** A connection that has not proved its link key by then is refused (AUTH_TIMEOUT). */
  authTimeoutMs: 10_000,
} as const;

/** Kinds of op the committee understands today. */
export const KNOWN_KINDS: ReadonlySet<string> = new Set(['place', 'cancel', 'modify', 'expire']);

/** Nack codes the sequencer sends. */
export const NACK = {
  BAD_FRAME: 'BAD_FRAME',
  FRAME_TOO_LARGE: 'FRAME_TOO_LARGE',
  UNKNOWN_KIND: 'UNKNOWN_KIND',
  WRONG_SHARE_COUNT: 'WRONG_SHARE_COUNT',
  SEALED_TOO_LARGE: 'SEALED_TOO_LARGE',
  RID_CONFLICT: 'RID_CONFLICT',
  BUSY: 'BUSY',
  JOURNAL_FAILED: 'JOURNAL_FAILED',
  BAD_NODE: 'BAD_NODE',
  FROM_SEQ_AHEAD: 'FROM_SEQ_AHEAD',
  FEED_ALREADY_STARTED: 'FEED_ALREADY_STARTED',
} as const;
