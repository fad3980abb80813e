package io.github.resilienthttp;

import io.github.resilienthttp.internal.util.Ranges;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;

/**
 * What a {@link ResponseClassifier} decided about one attempt: a {@link Kind}, a short machine-readable
 * reason (for logs, events and metrics, e.g. {@code "status-503"}) and, for retries, an optional delay
 * the server asked for ({@code Retry-After}).
 *
 * <p>Decisions as data follow the AWS SDK v2 retry strategy and gRPC's retry design (gRFC A6).
 * Immutable and thread-safe.
 */
public final class Decision {

  /** The kinds of decision. */
  public enum Kind {
    /** The attempt succeeded: return its response. */
    SUCCESS,
    /**
     * Safe to retry for any operation: the server did not process the request (it was never sent,
     * the server refused it, as with an HTTP/2 {@code REFUSED_STREAM}, or the server said so, as
     * with 429 and 503). The circuit breaker counts it as a failure only for a 5xx answer or a
     * network failure: 408, 409 and 429 come from a healthy server, and an exception of the
     * client's own network interceptor before anything was written is not recorded.
     */
    RETRY,
    /**
     * Outcome unknown: the server may have processed the request (a timeout or reset after the
     * request was written, 500, 502, 504). Retried only when the operation is idempotent (a safe or
     * idempotent method, or an idempotency key is sent); otherwise the caller gets
     * {@link OutcomeUnknownException}.
     */
    RETRY_IF_IDEMPOTENT,
    /** Permanent: retrying cannot help. A response is returned as is; an exception is thrown. */
    FAIL,
    /**
     * No opinion: the next classifier in a chain built with
     * {@link ResponseClassifier#orElse(ResponseClassifier)} decides (the defaults, at the end).
     */
    DEFER
  }

  private static final Decision DEFER = new Decision(Kind.DEFER, "defer", null);

  private final Kind kind;
  private final String reason;
  private final Duration retryAfter;

  private Decision(Kind kind, String reason, Duration retryAfter) {
    this.kind = kind;
    this.reason = Objects.requireNonNull(reason, "reason");
    this.retryAfter = retryAfter;
  }

  /**
   * The attempt succeeded.
   *
   * @param reason a short machine-readable reason
   * @return the decision
   */
  public static Decision success(String reason) {
    return new Decision(Kind.SUCCESS, reason, null);
  }

  /**
   * Safe to retry for any operation, after the backoff.
   *
   * @param reason a short machine-readable reason
   * @return the decision
   */
  public static Decision retry(String reason) {
    return new Decision(Kind.RETRY, reason, null);
  }

  /**
   * Safe to retry for any operation, waiting at least {@code retryAfter} when present.
   *
   * @param retryAfter the server-suggested delay (see {@link AttemptOutcome#retryAfter()})
   * @param reason a short machine-readable reason
   * @return the decision
   */
  public static Decision retry(String reason, Optional<Duration> retryAfter) {
    return new Decision(Kind.RETRY, reason, checkDelay(retryAfter));
  }

  /**
   * Outcome unknown: retry only when the operation is idempotent.
   *
   * @param reason a short machine-readable reason
   * @return the decision
   */
  public static Decision retryIfIdempotent(String reason) {
    return new Decision(Kind.RETRY_IF_IDEMPOTENT, reason, null);
  }

  /**
   * Outcome unknown, with a server-suggested delay when present.
   *
   * @param reason a short machine-readable reason
   * @param retryAfter the server-suggested delay, or empty
   * @return the decision
   */
  public static Decision retryIfIdempotent(String reason, Optional<Duration> retryAfter) {
    return new Decision(Kind.RETRY_IF_IDEMPOTENT, reason, checkDelay(retryAfter));
  }

  /**
   * Permanent failure: do not retry.
   *
   * @param reason a short machine-readable reason
   * @return the decision
   */
  public static Decision fail(String reason) {
    return new Decision(Kind.FAIL, reason, null);
  }

  /**
   * No opinion; see {@link Kind#DEFER}.
   *
   * @return the shared "no opinion" decision
   */
  public static Decision defer() {
    return DEFER;
  }

  private static Duration checkDelay(Optional<Duration> retryAfter) {
    Objects.requireNonNull(retryAfter, "retryAfter");
    retryAfter.ifPresent(d -> Ranges.atLeast("retryAfter", d, Duration.ZERO));
    return retryAfter.orElse(null);
  }

  /** {@return what to do with the attempt} */
  public Kind kind() {
    return kind;
  }

  /**
   * A short, low-cardinality, machine-readable reason such as {@code "status-503"}.
   *
   * @return the reason
   */
  public String reason() {
    return reason;
  }

  /**
   * The delay the server asked for, if any.
   *
   * @return the delay the server asked for, if any
   */
  public Optional<Duration> retryAfter() {
    return Optional.ofNullable(retryAfter);
  }

  /**
   * True for {@link Kind#RETRY} and {@link Kind#RETRY_IF_IDEMPOTENT}.
   *
   * @return whether the decision asks for a retry
   */
  public boolean isRetryable() {
    return kind == Kind.RETRY || kind == Kind.RETRY_IF_IDEMPOTENT;
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof Decision d
        && d.kind == kind && d.reason.equals(reason) && Objects.equals(d.retryAfter, retryAfter);
  }

  @Override
  public int hashCode() {
    return Objects.hash(kind, reason, retryAfter);
  }

  @Override
  public String toString() {
    return kind + "(" + reason + (retryAfter == null ? "" : ", retryAfter=" + retryAfter) + ")";
  }
}
