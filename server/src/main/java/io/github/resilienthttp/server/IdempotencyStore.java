package io.github.resilienthttp.server;

import java.time.Duration;
import java.time.Instant;

/**
 * Idempotency records, one per (scope, key): the persistence SPI of {@link IdempotencyGuard}.
 *
 * <p>Life of a record (the callbacks module's processing records, with a fingerprint and a recorded
 * response): {@link #claim} creates it <em>in progress</em> with a lease and returns
 * {@link KeyClaim.Acquired}; the request's handler runs and {@link #complete}s it with the response
 * (later claims with the same fingerprint get {@link KeyClaim.Completed}), or {@link #release}s it
 * when nothing took effect. While the lease holds, other claims get {@link KeyClaim.InProgress}. After
 * a crash the lease expires and the next claim takes the record over with a new token; the crashed
 * holder can then no longer complete ({@link LeaseLostException}). A claim with another fingerprint
 * than the record's gets {@link KeyClaim.Mismatch}.
 *
 * <p>Implementations are thread-safe; the JDBC store is also safe between processes.
 */
public interface IdempotencyStore {

  /**
   * Claims the record for (scope, key).
   *
   * @param scope principal, method and route, 1..500 characters
   * @param key the idempotency key, 1..255 characters
   * @param fingerprint the request's digest, 1..100 characters
   * @param lease how long the claim is exclusive unless completed or released; positive
   * @param reclaimCompletedBefore a completed record completed at or before this instant is taken over
   *     as new (its key is past retention); {@link Instant#MIN} never takes one over
   * @return the claim
   * @throws IdempotencyStoreException when the store fails
   * @throws IllegalArgumentException when an argument is out of range
   */
  KeyClaim claim(String scope, String key, String fingerprint, Duration lease, Instant reclaimCompletedBefore);

  /**
   * Records the response and marks the record completed.
   *
   * @param claim the caller's claim
   * @param response the response to replay
   * @throws LeaseLostException when the lease was taken over
   * @throws IdempotencyStoreException when the store fails
   */
  void complete(KeyClaim.Acquired claim, IdempotentResponse response);

  /**
   * Gives the record up (nothing took effect), so the next request with the key runs at once. Does
   * nothing when the lease was already taken over or the record completed.
   *
   * @param claim the caller's claim
   * @throws IdempotencyStoreException when the store fails (the lease then expires on its own)
   */
  void release(KeyClaim.Acquired claim);

  /**
   * Deletes completed records completed at or before an instant.
   *
   * @param completedAtOrBefore the cutoff
   * @return how many records were deleted
   * @throws IdempotencyStoreException when the store fails
   */
  int purgeCompletedBefore(Instant completedAtOrBefore);

  /**
   * Validates the common arguments of {@link #claim}; for implementations.
   *
   * @param scope the scope
   * @param key the key
   * @param fingerprint the fingerprint
   * @param lease the lease
   * @throws IllegalArgumentException naming the argument when one is out of range
   */
  static void checkClaim(String scope, String key, String fingerprint, Duration lease) {
    check("scope", scope, 500);
    check("key", key, IdempotencyKeyHeader.MAX_LENGTH);
    check("fingerprint", fingerprint, 100);
    if (lease == null || lease.isNegative() || lease.isZero()) {
      throw new IllegalArgumentException("lease: " + lease + " is not positive");
    }
  }

  private static void check(String field, String value, int max) {
    if (value == null || value.isEmpty() || value.length() > max) {
      throw new IllegalArgumentException(field + ": length " + (value == null ? "null" : value.length())
          + " is outside 1.." + max);
    }
  }
}
