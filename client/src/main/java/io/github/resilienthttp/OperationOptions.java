package io.github.resilienthttp;

import java.time.Duration;
import java.util.Objects;

/**
 * Per-call settings for plain OkHttp calls made through {@link ResilientHttpClient#okHttpClient()}
 * (for example by Retrofit), given as a request tag:
 *
 * <pre>{@code
 * Request request = new Request.Builder().url(url).post(body)
 *     .tag(OperationOptions.class, OperationOptions.builder().idempotencyKey(savedKey).build())
 *     .build();
 * }</pre>
 *
 * <p>Without the tag, each call is one operation with the client's defaults. Immutable and
 * thread-safe.
 */
public final class OperationOptions {
  private static final OperationOptions PASS_THROUGH = new OperationOptions(null, null, null, true);

  private final String idempotencyKey;
  private final Boolean sendIdempotencyKey;
  private final Duration deadline;
  private final boolean passThrough;

  private OperationOptions(String idempotencyKey, Boolean sendIdempotencyKey, Duration deadline,
      boolean passThrough) {
    this.idempotencyKey = idempotencyKey;
    this.sendIdempotencyKey = sendIdempotencyKey;
    this.deadline = deadline;
    this.passThrough = passThrough;
  }

  /**
   * Opts the call out: no key, no retries, no budget, breaker or bulkhead; OkHttp's own behaviour.
   *
   * @return the opt-out options
   */
  public static OperationOptions passThrough() {
    return PASS_THROUGH;
  }

  /**
   * A builder of per-call settings.
   *
   * @return a new builder
   */
  public static Builder builder() {
    return new Builder();
  }

  /**
   * The key to use, or {@code null} for a new one.
   *
   * @return the key, or {@code null}
   */
  public String idempotencyKey() {
    return idempotencyKey;
  }

  /**
   * Whether to send the key, or {@code null} for the client's policy.
   *
   * @return whether to send the key, or {@code null}
   */
  public Boolean sendIdempotencyKey() {
    return sendIdempotencyKey;
  }

  /**
   * The call's deadline, or {@code null} for the policy's.
   *
   * @return the deadline, or {@code null}
   */
  public Duration deadline() {
    return deadline;
  }

  /**
   * Whether the call opted out of the SDK ({@link #passThrough()}).
   *
   * @return whether the call opted out
   */
  public boolean isPassThrough() {
    return passThrough;
  }

  /** Builds {@link OperationOptions}. Not thread-safe. */
  public static final class Builder {
    private String idempotencyKey;
    private Boolean sendIdempotencyKey;
    private Duration deadline;

    private Builder() {}

    /**
     * The operation's key, as {@link Operation#idempotencyKey(String)}: validated, sent, verbatim.
     *
     * @param key 1 to 255 visible ASCII characters
     * @return this builder
     * @throws IllegalArgumentException when the key breaks that rule
     */
    public Builder idempotencyKey(String key) {
      this.idempotencyKey = IdempotencyKeyPolicy.validateKey(key);
      return this;
    }

    /**
     * Forces sending the key on or off, as {@link Operation#sendIdempotencyKey(boolean)}.
     *
     * @param send whether to send the key
     * @return this builder
     */
    public Builder sendIdempotencyKey(boolean send) {
      this.sendIdempotencyKey = send;
      return this;
    }

    /**
     * The operation's total deadline, as {@link Operation#deadline(Duration)}: 1 ms to 24 h.
     *
     * @param deadline the deadline
     * @return this builder
     * @throws IllegalArgumentException when out of range
     */
    public Builder deadline(Duration deadline) {
      Objects.requireNonNull(deadline, "deadline");
      RetryPolicy.Builder.checkRange("deadline", deadline, Duration.ofMillis(1));
      this.deadline = deadline;
      return this;
    }

    /**
     * The options.
     *
     * @return immutable options
     */
    public OperationOptions build() {
      return new OperationOptions(idempotencyKey, sendIdempotencyKey, deadline, false);
    }
  }
}
