package io.github.resilienthttp.server;

import java.time.Instant;
import java.util.Objects;

/**
 * What {@link IdempotencyStore#claim} found for one (scope, key): {@link Acquired} (run the handler;
 * you hold the lease), {@link Completed} (a recorded response to replay), {@link InProgress} (another
 * request holds an unexpired lease) or {@link Mismatch} (the key was used with another fingerprint).
 */
public sealed interface KeyClaim permits KeyClaim.Acquired, KeyClaim.Completed, KeyClaim.InProgress,
    KeyClaim.Mismatch {

  /** {@return the scope: principal, method and route} */
  String scope();

  /** {@return the idempotency key} */
  String key();

  /**
   * The caller holds the lease and must complete or release it. The token fences the lease: once
   * another request takes an expired lease over, completing with this token fails with
   * {@link LeaseLostException}.
   *
   * @param scope the scope
   * @param key the key
   * @param fingerprint the request's fingerprint, stored with the record
   * @param token this lease's token, unique per claim
   * @param leaseExpiresAt when another request may take the record over
   * @param attempt 1 for the first claim, 2 after a release or an expired lease, …
   * @param expiredLeaseTakenOver true when this claim took over a lease that expired (a crash)
   */
  record Acquired(String scope, String key, String fingerprint, String token, Instant leaseExpiresAt,
      int attempt, boolean expiredLeaseTakenOver) implements KeyClaim {
    /**
     * Validates.
     *
     * @param scope the scope
     * @param key the key
     * @param fingerprint the fingerprint
     * @param token the token
     * @param leaseExpiresAt the lease expiry
     * @param attempt the attempt
     * @param expiredLeaseTakenOver whether a lease was taken over
     */
    public Acquired {
      Objects.requireNonNull(scope, "scope");
      Objects.requireNonNull(key, "key");
      Objects.requireNonNull(fingerprint, "fingerprint");
      Objects.requireNonNull(token, "token");
      Objects.requireNonNull(leaseExpiresAt, "leaseExpiresAt");
    }

    /** Omits the token. */
    @Override
    public String toString() {
      return "Acquired{scope=" + scope + ", key=" + key + ", leaseExpiresAt=" + leaseExpiresAt
          + ", attempt=" + attempt + ", expiredLeaseTakenOver=" + expiredLeaseTakenOver + "}";
    }
  }

  /**
   * The key's first request completed; its response is recorded.
   *
   * @param scope the scope
   * @param key the key
   * @param response the recorded response
   * @param completedAt when it was recorded
   */
  record Completed(String scope, String key, IdempotentResponse response, Instant completedAt)
      implements KeyClaim {}

  /**
   * Another request with this key holds the lease.
   *
   * @param scope the scope
   * @param key the key
   * @param leaseExpiresAt when that lease expires
   */
  record InProgress(String scope, String key, Instant leaseExpiresAt) implements KeyClaim {}

  /**
   * The key was first used with another fingerprint.
   *
   * @param scope the scope
   * @param key the key
   */
  record Mismatch(String scope, String key) implements KeyClaim {}
}
