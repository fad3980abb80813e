package io.github.resilienthttp.internal.engine;

import io.github.resilienthttp.AttemptOutcome;
import io.github.resilienthttp.IdempotencyKeyPolicy;
import io.github.resilienthttp.OperationInfo;
import io.github.resilienthttp.ResumeToken;
import okhttp3.HttpUrl;

/**
 * The one rule for "is the key sent" and "is the run idempotent", for operations, plain calls,
 * polls, queries, re-sends and parked intents alike, and the {@link OperationInfo} that listeners
 * see of a run, built from it. Not API.
 */
public final class KeyDecision {
  private KeyDecision() {}

  /**
   * Whether a run sends its key: a key header already on the request is always sent as is; then
   * the caller's explicit choice; then a key the caller gave, or the policy's rule for the method.
   *
   * @param headerPresent whether the request carries the key header
   * @param explicit the caller's choice ({@code Operation.sendIdempotencyKey}), or {@code null}
   * @param callerKey whether the caller gave a key
   * @param policy the client's key policy
   * @param method the request's method
   * @return whether the key is sent
   */
  public static boolean keySent(boolean headerPresent, Boolean explicit, boolean callerKey,
      IdempotencyKeyPolicy policy, String method) {
    if (headerPresent) {
      return true;
    }
    if (explicit != null) {
      return explicit;
    }
    return callerKey || policy.sendsKeyFor(method);
  }

  /**
   * Whether a run may be repeated safely: its key is sent (the server deduplicates), or its method
   * is idempotent (RFC 9110 §9.2.2).
   *
   * @param keySent whether the key is sent
   * @param method the request's method
   * @return whether the run is idempotent
   */
  public static boolean idempotent(boolean keySent, String method) {
    return keySent || AttemptOutcome.isIdempotentMethod(method);
  }

  /**
   * What listeners see of a run.
   *
   * @param key the key
   * @param keySent whether it is sent
   * @param method the method
   * @param url the request's URL (its host is reported)
   * @return the run's info
   */
  public static OperationInfo info(String key, boolean keySent, String method, HttpUrl url) {
    return new OperationInfo(key, keySent, idempotent(keySent, method), method, url.host());
  }

  /**
   * What listeners see of the run a token resumes.
   *
   * @param token the token
   * @return the run's info
   */
  public static OperationInfo info(ResumeToken token) {
    return info(token.idempotencyKey(), token.idempotencyKeySent(), token.method(), token.url());
  }
}
