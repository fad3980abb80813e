package io.github.resilienthttp.internal.engine;

import io.github.resilienthttp.AttemptKind;
import io.github.resilienthttp.HedgingPolicy;
import io.github.resilienthttp.Outbox;
import io.github.resilienthttp.OutcomeQueryPolicy;
import io.github.resilienthttp.ResponseClassifier;
import io.github.resilienthttp.RetryPolicy;
import java.time.Duration;

/**
 * What an {@code Operation}'s setters chose, immutable: each setter makes a new value, so an
 * operation that sets nothing shares {@link #DEFAULTS}. Validation is the setters' (in the public
 * API, with its messages); {@code null} means "the client's" (or "none" for the outbox and the
 * query). Read once, when the operation starts. Not API.
 *
 * @param key the key the caller gave (or the request's key header carried), or {@code null}
 * @param keyFromCaller whether {@code key} came from the caller (and so is sent)
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
public record OperationSettings(String key, boolean keyFromCaller, Boolean sendKey,
    Duration deadline, HedgingPolicy hedging, boolean hedgingSet, Outbox outbox,
    OutcomeQueryPolicy outcomeQuery, AttemptKind firstKind, RetryPolicy retryPolicy,
    ResponseClassifier classifier) {
  /** Nothing set. */
  public static final OperationSettings DEFAULTS = new OperationSettings(null, false, null, null,
      null, false, null, null, null, null, null);

  /** With the caller's {@code key}, sent. */
  public OperationSettings withKey(String key) {
    return new OperationSettings(key, true, sendKey, deadline, hedging, hedgingSet, outbox,
        outcomeQuery, firstKind, retryPolicy, classifier);
  }

  /** With the caller's choice to send the key. */
  public OperationSettings withSendKey(boolean send) {
    return new OperationSettings(key, keyFromCaller, send, deadline, hedging, hedgingSet, outbox,
        outcomeQuery, firstKind, retryPolicy, classifier);
  }

  /** With the operation's own deadline. */
  public OperationSettings withDeadline(Duration deadline) {
    return new OperationSettings(key, keyFromCaller, sendKey, deadline, hedging, hedgingSet,
        outbox, outcomeQuery, firstKind, retryPolicy, classifier);
  }

  /** With the operation's own hedging ({@code null}: none). */
  public OperationSettings withHedging(HedgingPolicy hedging) {
    return new OperationSettings(key, keyFromCaller, sendKey, deadline, hedging, true, outbox,
        outcomeQuery, firstKind, retryPolicy, classifier);
  }

  /** With an outbox ({@code null}: none). */
  public OperationSettings withOutbox(Outbox outbox) {
    return new OperationSettings(key, keyFromCaller, sendKey, deadline, hedging, hedgingSet,
        outbox, outcomeQuery, firstKind, retryPolicy, classifier);
  }

  /** With an outcome query ({@code null}: none). */
  public OperationSettings withOutcomeQuery(OutcomeQueryPolicy outcomeQuery) {
    return new OperationSettings(key, keyFromCaller, sendKey, deadline, hedging, hedgingSet,
        outbox, outcomeQuery, firstKind, retryPolicy, classifier);
  }

  /** With the kind of the first attempt (a poll, a query, a re-send). */
  public OperationSettings withFirstKind(AttemptKind firstKind) {
    return new OperationSettings(key, keyFromCaller, sendKey, deadline, hedging, hedgingSet,
        outbox, outcomeQuery, firstKind, retryPolicy, classifier);
  }

  /** With the operation's own retry policy. */
  public OperationSettings withRetryPolicy(RetryPolicy retryPolicy) {
    return new OperationSettings(key, keyFromCaller, sendKey, deadline, hedging, hedgingSet,
        outbox, outcomeQuery, firstKind, retryPolicy, classifier);
  }

  /** With the operation's own classifier. */
  public OperationSettings withClassifier(ResponseClassifier classifier) {
    return new OperationSettings(key, keyFromCaller, sendKey, deadline, hedging, hedgingSet,
        outbox, outcomeQuery, firstKind, retryPolicy, classifier);
  }

  /**
   * The hedging that applies: the operation's own, or {@code client}'s.
   *
   * @param client the client's hedging, or {@code null}
   * @return the hedging, or {@code null} for none
   */
  public HedgingPolicy hedgingOr(HedgingPolicy client) {
    return hedgingSet ? hedging : client;
  }
}
