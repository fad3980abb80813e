package io.github.resilienthttp.testkit;

/**
 * A deliberate defect of an {@link IdempotentTestServer}'s idempotency handling, to check that a
 * tool which claims to detect broken servers (the {@code testkit.probe.IdempotencyProbe}) does.
 * Set with {@link IdempotentTestServer.Builder#flaw(Flaw)}; {@link #NONE} by default. Each flaw is
 * a mistake real servers make.
 */
public enum Flaw {
  /** A correct server. */
  NONE,
  /** The key is ignored: every request is executed (a new effect each time). */
  NO_DEDUPLICATION,
  /**
   * The request fingerprint is never compared: the same key with a different body is answered with
   * the recorded response (or 409) instead of 422.
   */
  FINGERPRINT_NOT_CHECKED,
  /**
   * The key is looked up, then processed, and only recorded afterwards (check-then-insert with no
   * atomic claim): identical requests arriving within the processing time all execute.
   */
  CHECK_THEN_INSERT_RACE,
  /**
   * A replay is not the recorded response: it answers {@code 200} with the recorded body instead
   * of the recorded status (e.g. {@code 201}).
   */
  REPLAYS_DIFFERENT_RESULT,
  /**
   * The record is deleted as soon as the response is built (a retention of zero): a retry after
   * the first answer executes again, while identical requests during the processing time still get
   * 409.
   */
  FORGETS_KEYS_AT_ONCE
}
