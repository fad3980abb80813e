package io.github.resilienthttp;

import java.time.Duration;
import java.util.Objects;
import java.util.Optional;

/**
 * How many attempts an operation may make, how long it waits between them and how long it may take
 * in total.
 *
 * <table>
 * <caption>Settings</caption>
 * <tr><th>setting</th><th>default</th><th>range</th></tr>
 * <tr><td>{@link Builder#maxAttempts(int) maxAttempts} (first attempt included)</td><td>3</td>
 *     <td>1..100</td></tr>
 * <tr><td>{@link Builder#backoff(Backoff) backoff}</td>
 *     <td>{@code exponentialFullJitter(100 ms, 5 s)}</td><td>any</td></tr>
 * <tr><td>{@link Builder#deadline(Duration) deadline}: total, over every attempt and wait</td>
 *     <td>30 s</td><td>1 ms..24 h</td></tr>
 * <tr><td>{@link Builder#attemptTimeout(Duration) attemptTimeout}: caps connect, read and write
 *     timeouts of each attempt</td><td>none (the wrapped client's timeouts)</td>
 *     <td>1 ms..24 h</td></tr>
 * <tr><td>{@link Builder#maxRetryAfter(Duration) maxRetryAfter}: the longest {@code Retry-After} the
 *     SDK waits for</td><td>60 s</td><td>0..24 h</td></tr>
 * <tr><td>{@link Builder#maxReplayableBodyBytes(long) maxReplayableBodyBytes}: the largest request
 *     body that may be sent more than once</td><td>8 MiB</td><td>0..</td></tr>
 * </table>
 *
 * <p>Request scope: a body longer than {@code maxReplayableBodyBytes} is sent once, as if it were
 * {@link okhttp3.RequestBody#isOneShot() one-shot}: an attempt that failed before sending it is
 * retried, one that may have reached the server ends with {@link OutcomeUnknownException} instead
 * of a re-upload (why: {@code docs/outbox.md}, "Request scope"). A body of unknown length
 * ({@code contentLength() == -1}, streamed) is not bounded: the SDK does not buffer bodies to
 * measure them.
 *
 * <p>Waits: before retry {@code n} the SDK waits {@code backoff.delay(n)}, or the server's
 * {@code Retry-After} (RFC 9110 §10.2.3) when that is longer, so a retry never starts before the
 * server asked. When {@code Retry-After} is longer than {@code maxRetryAfter}, or a wait would end
 * after the deadline, the SDK stops at once instead of sleeping for nothing: it returns the last
 * response (or throws {@link DeadlineExceededException} when the last attempt failed with an
 * exception).
 *
 * <p>Immutable and thread-safe.
 */
public final class RetryPolicy {
  static final Duration MAX_DURATION = Duration.ofHours(24);

  private static final RetryPolicy DEFAULTS = builder().build();

  private final int maxAttempts;
  private final Backoff backoff;
  private final Duration deadline;
  private final Duration attemptTimeout;
  private final Duration maxRetryAfter;
  private final long maxReplayableBodyBytes;

  private RetryPolicy(Builder b) {
    this.maxAttempts = b.maxAttempts;
    this.backoff = b.backoff;
    this.deadline = b.deadline;
    this.attemptTimeout = b.attemptTimeout;
    this.maxRetryAfter = b.maxRetryAfter;
    this.maxReplayableBodyBytes = b.maxReplayableBodyBytes;
  }

  /**
   * The defaults in the table above.
   *
   * @return the default policy
   */
  public static RetryPolicy defaults() {
    return DEFAULTS;
  }

  /** {@return a builder starting from the defaults} */
  public static Builder builder() {
    return new Builder();
  }

  /**
   * A builder that starts from this policy's settings.
   *
   * @return A builder that starts from this policy's settings
   */
  public Builder toBuilder() {
    Builder b = new Builder()
        .maxAttempts(maxAttempts).backoff(backoff).deadline(deadline).maxRetryAfter(maxRetryAfter);
    b.attemptTimeout = attemptTimeout;
    b.maxReplayableBodyBytes = maxReplayableBodyBytes;
    return b;
  }

  /**
   * Attempts per operation, the first included.
   *
   * @return attempts per operation, the first included
   */
  public int maxAttempts() {
    return maxAttempts;
  }

  /** {@return the wait before each retry} */
  public Backoff backoff() {
    return backoff;
  }

  /**
   * The total time an operation may take, from {@code execute()} to its return.
   *
   * @return the total time an operation may take, from {@code execute()} to its return
   */
  public Duration deadline() {
    return deadline;
  }

  /**
   * The cap on each attempt's connect, read and write timeouts, if set.
   *
   * @return the cap on each attempt's connect, read and write timeouts, if set
   */
  public Optional<Duration> attemptTimeout() {
    return Optional.ofNullable(attemptTimeout);
  }

  /**
   * The longest {@code Retry-After} the SDK waits for before a retry.
   *
   * @return the longest {@code Retry-After} the SDK waits for before a retry
   */
  public Duration maxRetryAfter() {
    return maxRetryAfter;
  }

  /**
   * The largest request body, in bytes, that may be sent more than once (see the class comment).
   *
   * @return the largest request body that may be sent more than once
   */
  public long maxReplayableBodyBytes() {
    return maxReplayableBodyBytes;
  }

  @Override
  public String toString() {
    return "RetryPolicy{maxAttempts=" + maxAttempts + ", backoff=" + backoff + ", deadline="
        + deadline + ", attemptTimeout=" + attemptTimeout + ", maxRetryAfter=" + maxRetryAfter
        + ", maxReplayableBodyBytes=" + maxReplayableBodyBytes + "}";
  }

  /** Builds a {@link RetryPolicy}; validates everything in {@link #build()}. Not thread-safe. */
  public static final class Builder {
    private int maxAttempts = 3;
    private Backoff backoff = Backoff.exponentialFullJitter(Duration.ofMillis(100), Duration.ofSeconds(5));
    private Duration deadline = Duration.ofSeconds(30);
    private Duration attemptTimeout;
    private Duration maxRetryAfter = Duration.ofSeconds(60);
    private long maxReplayableBodyBytes = 8L * 1024 * 1024;

    private Builder() {}

    /**
     * Attempts per operation, the first included: 1 (no retry) to 100. Default 3.
     *
     * @param maxAttempts attempts per operation
     * @return this builder
     */
    public Builder maxAttempts(int maxAttempts) {
      this.maxAttempts = maxAttempts;
      return this;
    }

    /**
     * Default {@code Backoff.exponentialFullJitter(100 ms, 5 s)}.
     *
     * @param backoff the wait before each retry
     * @return this builder
     */
    public Builder backoff(Backoff backoff) {
      this.backoff = Objects.requireNonNull(backoff, "backoff");
      return this;
    }

    /**
     * Total time per operation, over every attempt and wait: 1 ms to 24 h. Default 30 s.
     *
     * @param deadline the total time per operation
     * @return this builder
     */
    public Builder deadline(Duration deadline) {
      this.deadline = Objects.requireNonNull(deadline, "deadline");
      return this;
    }

    /**
     * Caps each attempt's connect, read and write timeouts: 1 ms to 24 h. Default: none.
     *
     * @param attemptTimeout the cap on each attempt's timeouts
     * @return this builder
     */
    public Builder attemptTimeout(Duration attemptTimeout) {
      this.attemptTimeout = Objects.requireNonNull(attemptTimeout, "attemptTimeout");
      return this;
    }

    /**
     * The longest {@code Retry-After} to wait for: 0 to 24 h. Default 60 s.
     *
     * @param maxRetryAfter the longest {@code Retry-After} to wait for
     * @return this builder
     */
    public Builder maxRetryAfter(Duration maxRetryAfter) {
      this.maxRetryAfter = Objects.requireNonNull(maxRetryAfter, "maxRetryAfter");
      return this;
    }

    /**
     * The largest request body that may be sent more than once; a longer one is sent once (see the
     * class comment). Default 8 MiB.
     *
     * @param maxReplayableBodyBytes 0 (every body is sent once) or more
     * @return this builder
     */
    public Builder maxReplayableBodyBytes(long maxReplayableBodyBytes) {
      this.maxReplayableBodyBytes = maxReplayableBodyBytes;
      return this;
    }

    /**
     * Builds the policy.
     *
     * @return the policy
     * @throws IllegalArgumentException naming the field and the value when a setting is out of range
     */
    public RetryPolicy build() {
      if (maxAttempts < 1 || maxAttempts > 100) {
        throw new IllegalArgumentException("maxAttempts must be in 1..100 but was " + maxAttempts);
      }
      checkRange("deadline", deadline, Duration.ofMillis(1));
      if (attemptTimeout != null) {
        checkRange("attemptTimeout", attemptTimeout, Duration.ofMillis(1));
      }
      checkRange("maxRetryAfter", maxRetryAfter, Duration.ZERO);
      if (maxReplayableBodyBytes < 0) {
        throw new IllegalArgumentException(
            "maxReplayableBodyBytes must be at least 0 but was " + maxReplayableBodyBytes);
      }
      return new RetryPolicy(this);
    }

    static void checkRange(String field, Duration value, Duration min) {
      if (value.compareTo(min) < 0 || value.compareTo(MAX_DURATION) > 0) {
        throw new IllegalArgumentException(
            field + " must be in " + min + ".." + MAX_DURATION + " but was " + value);
      }
    }
  }
}
