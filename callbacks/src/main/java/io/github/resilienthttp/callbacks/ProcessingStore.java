package io.github.resilienthttp.callbacks;

import java.time.Duration;

/**
 * Processing records: one per (scope, event ID), so that an event, or a queue message, takes effect
 * once however often it is delivered.
 *
 * <p>Life of a record: {@link #claim} creates it <em>in progress</em> with a lease and returns
 * {@link Claim.Acquired}; the consumer does the work and {@link #complete}s it with a result (it is then
 * <em>done</em>, and every later claim returns {@link Claim.Done} with that result), or
 * {@link #release}s it when the work failed (the next claim acquires it again). While a lease is held,
 * other claims return {@link Claim.InProgress}. When a consumer crashes, its lease expires and the next
 * claim takes the record over with a new token; the crashed consumer can then no longer complete
 * ({@link LeaseLostException}), so two consumers never both complete one record.
 *
 * <p>Retention: a done record is kept for {@link #retention()} after completion. A delivery of the
 * same event after that is treated as <b>new</b> and processed again. Keep retention longer than the
 * sender's redelivery window (Stripe retries for up to three days) and longer than the verifier's
 * timestamp tolerance; {@link CallbackReceiver.Builder#build()} checks the latter.
 *
 * <p>Implementations are thread-safe and safe to share between consumers; the JDBC store is also safe
 * between processes.
 */
public interface ProcessingStore {

  /**
   * Claims the record for (scope, eventId).
   *
   * @param scope what the ID is unique within, e.g. {@code stripe:acct_123} or a queue name
   * @param eventId the event or message ID
   * @param lease how long the claim is exclusive if the caller neither completes nor releases it
   * @return {@link Claim.Acquired}, {@link Claim.Done} or {@link Claim.InProgress}
   * @throws ProcessingStoreException when the store fails
   * @throws IllegalArgumentException when scope or eventId is empty or too long, or lease not positive
   */
  Claim claim(String scope, String eventId, Duration lease);

  /**
   * Marks the record done with a result.
   *
   * @param claim the caller's claim
   * @param result stored and returned to later duplicate claims; may be {@code null}
   * @throws LeaseLostException when the lease was taken over by another consumer
   * @throws ProcessingStoreException when the store fails
   */
  void complete(Claim.Acquired claim, String result);

  /**
   * Gives the record up after a failure, so the next delivery processes it at once instead of after the
   * lease. Does nothing when the lease was already taken over.
   *
   * @param claim the caller's claim
   * @throws ProcessingStoreException when the store fails (the lease then expires on its own)
   */
  void release(Claim.Acquired claim);

  /** {@return how long done records are kept after completion} */
  Duration retention();
}
