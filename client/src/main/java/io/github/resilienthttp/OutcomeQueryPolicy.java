package io.github.resilienthttp;

import io.github.resilienthttp.internal.util.Ranges;
import java.time.Duration;
import java.util.Objects;

/**
 * When and how an {@link OutcomeQuery} settles an unknown outcome
 * ({@link Operation#outcomeQuery(OutcomeQueryPolicy)}). Immutable and thread-safe.
 *
 * <p>When an operation would end with {@link OutcomeUnknownException} (not reasons
 * {@code interrupted} or {@code canceled}), the SDK waits {@link #graceDelay()}, then runs the query
 * as a GET operation of its own inside the operation's deadline (its attempt reported as
 * {@link AttemptKind#QUERY}, retried on transient failure, its retries paid from the retry budget):
 * <ul>
 *   <li>{@link OutcomeQuery.Answer#FOUND found}: the operation returns the query's response, marked
 *       ({@link OutcomeQuery#foundByQuery(Response)});
 *   <li>{@link OutcomeQuery.Answer#NOT_FOUND not found}: the attempt counts as not sent, and the
 *       request is sent again (a retry: it takes a retry budget token), at most
 *       {@link #maxResends()} times; when no more may be sent, {@link RetriesExhaustedException}
 *       (reason {@code not-found-by-query}), a definite "it did not happen";
 *   <li>{@link OutcomeQuery.Answer#CANNOT_TELL cannot tell}, or the query itself failed, or the
 *       deadline leaves no time for it: the original {@link OutcomeUnknownException}, the query's
 *       failure attached as suppressed.
 * </ul>
 *
 * <h2>The race a query cannot close</h2>
 *
 * A query answers for the moment it runs. A request that timed out on the client may still be in
 * flight or queued on the server, and commit after the query said "not found": the re-send then does
 * the work twice. The grace delay makes that unlikely by letting such a write land first; set it
 * above the server's own request timeout (the longest a request can still be processed after the
 * client gave up). It cannot make it impossible: only an idempotency key can. Default 2 s.
 */
public final class OutcomeQueryPolicy {
  private final OutcomeQuery query;
  private final Duration graceDelay;
  private final int maxResends;

  private OutcomeQueryPolicy(Builder b) {
    this.query = b.query;
    this.graceDelay = b.graceDelay;
    this.maxResends = b.maxResends;
  }

  /**
   * A builder for {@code query}.
   *
   * @param query the query
   * @return a builder with grace delay 2 s and 1 re-send
   */
  public static Builder builder(OutcomeQuery query) {
    return new Builder(query);
  }

  /** {@return the query} */
  public OutcomeQuery query() {
    return query;
  }

  /** {@return the wait between the unknown outcome and the query} */
  public Duration graceDelay() {
    return graceDelay;
  }

  /** {@return how many times a request found not done may be sent again} */
  public int maxResends() {
    return maxResends;
  }

  @Override
  public String toString() {
    return "OutcomeQueryPolicy{grace " + graceDelay + ", maxResends " + maxResends + "}";
  }

  /** Builds an {@link OutcomeQueryPolicy}. Not thread-safe. */
  public static final class Builder {
    private final OutcomeQuery query;
    private Duration graceDelay = Duration.ofSeconds(2);
    private int maxResends = 1;

    private Builder(OutcomeQuery query) {
      this.query = Objects.requireNonNull(query, "query");
    }

    /**
     * The wait before querying (see the race above). Default 2 s.
     *
     * @param graceDelay 0 to 24 h
     * @return this builder
     */
    public Builder graceDelay(Duration graceDelay) {
      this.graceDelay = Objects.requireNonNull(graceDelay, "graceDelay");
      return this;
    }

    /**
     * How many times a request the query found not done may be sent again. Default 1.
     *
     * @param maxResends 0 to 10
     * @return this builder
     */
    public Builder maxResends(int maxResends) {
      this.maxResends = maxResends;
      return this;
    }

    /**
     * Validates and builds.
     *
     * @return the policy
     * @throws IllegalArgumentException when a setting is out of range
     */
    public OutcomeQueryPolicy build() {
      RetryPolicy.Builder.checkRange("graceDelay", graceDelay, Duration.ZERO);
      Ranges.check("maxResends", maxResends, 0, 10);
      return new OutcomeQueryPolicy(this);
    }
  }
}
