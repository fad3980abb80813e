package io.github.resilienthttp.server;

import java.util.Objects;

/**
 * What {@link IdempotencyGuard#admit} decided for one request: {@link Proceed} (run the handler, then
 * complete the ticket), {@link Answer} (send this response, do not run the handler: a replay, a
 * {@code 409}, a {@code 422} or a {@code 400}) or {@link Bypass} (no key on a request that needs
 * none, or a method the guard does not cover: run the handler as if there were no guard).
 */
public sealed interface Admission permits Admission.Proceed, Admission.Answer, Admission.Bypass {

  /**
   * Run the handler and complete (or abandon) the ticket.
   *
   * @param ticket the claim on the key
   */
  record Proceed(IdempotencyTicket ticket) implements Admission {
    /**
     * Validates.
     *
     * @param ticket the ticket
     */
    public Proceed {
      Objects.requireNonNull(ticket, "ticket");
    }
  }

  /**
   * Send this response instead of running the handler.
   *
   * @param response the response (a replay carries the replay marker header)
   * @param kind why
   */
  record Answer(IdempotentResponse response, Kind kind) implements Admission {}

  /** No idempotency handling applies. */
  record Bypass() implements Admission {}

  /** Why the guard answered itself. */
  enum Kind {
    /** The recorded response of the key's first request. */
    REPLAY,
    /** {@code 409}: the key's first request holds the lease. */
    IN_PROGRESS,
    /** {@code 422}: the key was used with another fingerprint. */
    MISMATCH,
    /** {@code 422}: the key is past retention and {@link AfterRetention#refuse()} is configured. */
    EXPIRED,
    /** {@code 400}: the key is missing where required, or malformed. */
    INVALID
  }
}
