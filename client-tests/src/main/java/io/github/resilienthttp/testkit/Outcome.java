package io.github.resilienthttp.testkit;

/**
 * How {@link IdempotentTestServer} handled one request (see {@link ReceivedRequest#outcome()}).
 * Independent of the delivery fault, e.g. a request hit by {@link Fault#processThenDrop()} that
 * created a payment has outcome {@link #CREATED} and fault kind {@link Fault.Kind#PROCESS_THEN_DROP}.
 */
public enum Outcome {
  /** Still being handled (e.g. sleeping for the processing time). */
  PENDING,
  /** Processed and a business effect was performed (first request with a key, or a keyless one). */
  CREATED,
  /** Processed without any business effect (safe methods such as GET). */
  SERVED,
  /** Answered with the response recorded for its key (no new effect). */
  REPLAYED,
  /** 409: the first request with the same key was still being processed. */
  IN_PROGRESS,
  /** 422: the key was already used for a request with a different fingerprint. */
  KEY_MISMATCH,
  /** 400: a non-idempotent request without key while keys are required. */
  KEY_MISSING,
  /** 500: the business handler threw; nothing was recorded for the key. */
  HANDLER_FAILED,
  /** The server was closed while the request was being processed; no effect. */
  ABORTED,
  /** Answered with an injected status ({@link Fault#status(int, String)}); not processed. */
  FAULT_STATUS,
  /** Connection closed without processing ({@link Fault#dropBeforeProcessing()}). */
  FAULT_DROPPED,
  /** Never answered ({@link Fault#noResponse()}); not processed. */
  FAULT_NO_RESPONSE,
  /**
   * The in-progress record's lease had expired and the business write of its crashed owner was
   * found: the record was completed from it and the response sent as a replay, no new effect (see
   * {@link CrashPoint}).
   */
  RECOVERED,
  /**
   * The server crashed ({@link CrashPoint}) while handling it, or had crashed before it arrived:
   * the connection was closed unanswered.
   */
  CRASHED
}
