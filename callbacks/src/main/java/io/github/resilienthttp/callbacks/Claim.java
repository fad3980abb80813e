package io.github.resilienthttp.callbacks;

import java.time.Instant;
import java.util.Objects;
import java.util.Optional;

/**
 * What {@link ProcessingStore#claim} found for one (scope, event ID): {@link Acquired} (process it now;
 * you hold the lease), {@link Done} (already processed; here is the stored result) or
 * {@link InProgress} (another consumer holds an unexpired lease; try again later).
 */
public sealed interface Claim permits Claim.Acquired, Claim.Done, Claim.InProgress {

  /** {@return the scope of the record} */
  String scope();

  /** {@return the event (or message) ID of the record} */
  String eventId();

  /**
   * The caller holds the lease and must {@link ProcessingStore#complete complete} or
   * {@link ProcessingStore#release release} it. The token fences the lease: once another consumer takes
   * an expired lease over, completing with this token fails with {@link LeaseLostException}.
   *
   * @param scope the scope
   * @param eventId the event ID
   * @param token this lease's token, unique per claim
   * @param leaseExpiresAt when another consumer may take the record over
   * @param attempt 1 for the first claim of this record, 2 after a release or an expired lease, …
   */
  record Acquired(String scope, String eventId, String token, Instant leaseExpiresAt, int attempt)
      implements Claim {
    /**
     * Validates.
     *
     * @param scope the scope
     * @param eventId the event ID
     * @param token the lease token
     * @param leaseExpiresAt the lease's expiry
     * @param attempt the attempt number
     */
    public Acquired {
      Objects.requireNonNull(scope, "scope");
      Objects.requireNonNull(eventId, "eventId");
      Objects.requireNonNull(token, "token");
      Objects.requireNonNull(leaseExpiresAt, "leaseExpiresAt");
    }

    /** Omits the token. */
    @Override
    public String toString() {
      return "Acquired{scope=" + scope + ", eventId=" + eventId + ", leaseExpiresAt=" + leaseExpiresAt
          + ", attempt=" + attempt + "}";
    }
  }

  /**
   * The record was completed earlier: a duplicate delivery.
   *
   * @param scope the scope
   * @param eventId the event ID
   * @param result what the completing consumer stored, may be {@code null}
   * @param completedAt when it was completed
   */
  record Done(String scope, String eventId, String result, Instant completedAt) implements Claim {
    /** {@return the stored result, empty when the consumer stored none} */
    public Optional<String> storedResult() {
      return Optional.ofNullable(result);
    }
  }

  /**
   * Another consumer holds the lease.
   *
   * @param scope the scope
   * @param eventId the event ID
   * @param leaseExpiresAt when the lease expires and the record may be taken over
   */
  record InProgress(String scope, String eventId, Instant leaseExpiresAt) implements Claim {}
}
