package io.github.resilienthttp.internal.engine;

import io.github.resilienthttp.AttemptKind;
import io.github.resilienthttp.HedgingPolicy;
import io.github.resilienthttp.Outbox;
import io.github.resilienthttp.OutcomeQueryPolicy;
import io.github.resilienthttp.ResponseClassifier;
import io.github.resilienthttp.RetryPolicy;
import java.time.Duration;

/**
 * What an {@code Operation}'s setters chose, immutable: the setters fill a {@link Builder} (made
 * by the first setter), built once when the operation starts; an operation that sets nothing uses
 * {@link #DEFAULTS}. Validation is the setters' (in the public
 * API, with its messages); {@code null} means "the client's" (or "none" for the outbox and the
 * query). Read once, when the operation starts. Not API.
 *
 * @param key the key the caller gave (or the request's key header carried), or {@code null}
 * @param keyFromCaller whether {@code key} came from the caller (and so is sent)
 * @param keyInHeader whether the request carries the key header (then the key is sent as it is)
 * @param sendKey the caller's choice to send the key, or {@code null} for the client's policy
 * @param deadline the operation's own deadline, or {@code null} for its retry policy's
 * @param hedging the operation's own hedging (when {@code hedgingSet}; {@code null}: none)
 * @param hedgingSet whether {@code hedging} replaces the client's
 * @param outbox where an indefinite outcome is parked, or {@code null}
 * @param outcomeQuery settles an unknown outcome by asking, or {@code null}
 * @param firstKind how the first attempt is reported, or {@code null} for {@link AttemptKind#FIRST}
 * @param retryPolicy the operation's own retry policy, or {@code null}
 * @param classifier the operation's own classifier, or {@code null}
 */
public record OperationSettings(String key, boolean keyFromCaller, boolean keyInHeader,
    Boolean sendKey,
    Duration deadline, HedgingPolicy hedging, boolean hedgingSet, Outbox outbox,
    OutcomeQueryPolicy outcomeQuery, AttemptKind firstKind, RetryPolicy retryPolicy,
    ResponseClassifier classifier) {
  /** Nothing set. */
  public static final OperationSettings DEFAULTS = new Builder().build();

  /**
   * The hedging that applies: the operation's own, or {@code client}'s.
   *
   * @param client the client's hedging, or {@code null}
   * @return the hedging, or {@code null} for none
   */
  public HedgingPolicy hedgingOr(HedgingPolicy client) {
    return hedgingSet ? hedging : client;
  }

  /** What the setters chose so far; not thread-safe (an operation is configured by one thread). */
  public static final class Builder {
    private String key;
    private boolean keyFromCaller;
    private boolean keyInHeader;
    private Boolean sendKey;
    private Duration deadline;
    private HedgingPolicy hedging;
    private boolean hedgingSet;
    private Outbox outbox;
    private OutcomeQueryPolicy outcomeQuery;
    private AttemptKind firstKind;
    private RetryPolicy retryPolicy;
    private ResponseClassifier classifier;

    /** The caller's key, sent. */
    public Builder key(String key) {
      this.key = key;
      this.keyFromCaller = true;
      return this;
    }

    /** The key the request's key header carries: sent as it is. */
    public Builder keyInHeader(String key) {
      key(key);
      this.keyInHeader = true;
      return this;
    }

    /** The key chosen so far, or {@code null}. */
    public String key() {
      return key;
    }

    /** The caller's choice to send the key. */
    public Builder sendKey(boolean send) {
      this.sendKey = send;
      return this;
    }

    /** The operation's own deadline. */
    public Builder deadline(Duration deadline) {
      this.deadline = deadline;
      return this;
    }

    /** The operation's own hedging ({@code null}: none). */
    public Builder hedging(HedgingPolicy hedging) {
      this.hedging = hedging;
      this.hedgingSet = true;
      return this;
    }

    /** An outbox ({@code null}: none). */
    public Builder outbox(Outbox outbox) {
      this.outbox = outbox;
      return this;
    }

    /** An outcome query ({@code null}: none). */
    public Builder outcomeQuery(OutcomeQueryPolicy outcomeQuery) {
      this.outcomeQuery = outcomeQuery;
      return this;
    }

    /** The kind of the first attempt (a poll, a query, a re-send). */
    public Builder firstKind(AttemptKind firstKind) {
      this.firstKind = firstKind;
      return this;
    }

    /** The operation's own retry policy. */
    public Builder retryPolicy(RetryPolicy retryPolicy) {
      this.retryPolicy = retryPolicy;
      return this;
    }

    /** The operation's own classifier. */
    public Builder classifier(ResponseClassifier classifier) {
      this.classifier = classifier;
      return this;
    }

    /** The settings, immutable. */
    public OperationSettings build() {
      return new OperationSettings(key, keyFromCaller, keyInHeader, sendKey, deadline, hedging,
          hedgingSet,
          outbox, outcomeQuery, firstKind, retryPolicy, classifier);
    }
  }
}
