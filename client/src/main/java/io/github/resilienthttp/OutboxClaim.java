package io.github.resilienthttp;

import java.time.Instant;
import java.util.Objects;

/**
 * One resumer's lease on one parked intent, from {@link Outbox#claim}: while the lease runs no other
 * claim returns the entry, and only the holder of the current claim may settle it
 * ({@link Outbox#complete}, {@link Outbox#reschedule}, {@link Outbox#renew}). The token is the fence:
 * a claim that was taken over after its lease ran out carries a token the outbox no longer holds, so
 * its late calls are refused (they return {@code false}) instead of undoing the new holder's work.
 * Immutable.
 *
 * @param entry the entry as it was when claimed (its {@code dueAt} is the due time before the claim)
 * @param token the fencing token, unique per claim (an outbox that holds no leases uses
 *     {@value #UNLEASED})
 * @param leaseExpiresAt when the lease runs out and another claim may take the entry
 */
public record OutboxClaim(OutboxEntry entry, String token, Instant leaseExpiresAt) {
  /** The token of claims made by an outbox without leases ({@link Outbox}'s default methods). */
  public static final String UNLEASED = "unleased";

  /**
   * Checks the fields.
   *
   * @param entry the entry
   * @param token the fencing token, not blank
   * @param leaseExpiresAt when the lease runs out
   */
  public OutboxClaim {
    Objects.requireNonNull(entry, "entry");
    Objects.requireNonNull(token, "token");
    Objects.requireNonNull(leaseExpiresAt, "leaseExpiresAt");
    if (token.isBlank()) {
      throw new IllegalArgumentException("token must not be blank");
    }
  }

  /** {@return the intent's idempotency key} */
  public String idempotencyKey() {
    return entry.token().idempotencyKey();
  }
}
