package io.github.resilienthttp.testkit;

/**
 * Where a resumer process dies while it settles one parked intent
 * ({@link io.github.resilienthttp.OutboxResumer}): the client-side counterpart of {@link CrashPoint}.
 * Arm it on a {@link CrashingOutbox}; the resumer's next call of that stage throws
 * {@link CrashingOutbox.ProcessCrash}, which no SDK code catches, so the drain ends there with the
 * claim still leased, as when the process died.
 */
public enum ResumerCrashPoint {
  /**
   * After the resume got its definite answer, before the result handler ran: the resumer dies at
   * its lease renewal, the step just before the handler. (A resumer also renews before a resume
   * when less than half its lease is left: give the drill a lease that does not run down that far.)
   */
  AFTER_RESUME_BEFORE_RESULT,
  /**
   * After the result handler returned, before the entry left the outbox: the resumer dies at its
   * completion of the claim.
   */
  AFTER_RESULT_BEFORE_REMOVE
}
