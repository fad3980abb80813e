package io.github.resilienthttp;

import io.github.resilienthttp.internal.outbox.InMemoryOutbox;
import io.github.resilienthttp.internal.util.Ranges;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * Where operations that ended without a definite outcome (outcome unknown, retry budget, breaker,
 * bulkhead, deadline, a wait that stopped) park their intent, for an {@link OutboxResumer} to resume
 * later with the same key, instead of being dropped or retried for ever. Entries are keyed by the
 * intent's idempotency key: parking the same key again replaces its entry (and voids any claim on
 * it). Park with {@link Operation#parkIndefiniteOutcomes(Outbox)}.
 *
 * <p><b>Claims, leases and fences.</b> Several resumers (threads or processes) may drain one outbox.
 * {@link #claim} hands each due entry to one of them with a lease: until the lease runs out no other
 * claim returns it; then it is due again and the next claim takes it over with a new fencing token.
 * The settling calls ({@link #complete}, {@link #reschedule}, {@link #renew}) act only while the
 * caller's token is the entry's current one and return {@code false} otherwise, so a resumer that
 * stalled past its lease cannot remove or reschedule an entry another resumer now holds. This is the
 * lease-and-fence scheme of Kleppmann's "How to do distributed locking" (2016), with the claim token
 * as the fence. An entry leaves the outbox only by {@link #complete} (or {@link #remove}).
 *
 * <p>An SPI: {@link #inMemory()} is for tests and single processes; a durable outbox (a database
 * table written in the same transaction as the business record) implements {@link #park},
 * {@link #due}, {@link #remove} and {@link #size}, and should implement the claim methods too: their
 * defaults hold no lease (each claim returns every due entry, with the token
 * {@value OutboxClaim#UNLEASED}, and the settling calls always succeed), which is correct for one
 * resumer at a time only. Implementations must be thread-safe.
 */
public interface Outbox {

  /**
   * Stores {@code entry}, replacing one with the same key (and voiding any claim on it).
   *
   * @param entry the entry
   */
  void park(OutboxEntry entry);

  /**
   * Up to {@code max} entries due at {@code now}, oldest due first; claims nothing (an entry under a
   * lease is not due until the lease runs out). Resumers use {@link #claim}.
   *
   * @param now the time
   * @param max at most this many
   * @return the entries
   */
  List<OutboxEntry> due(Instant now, int max);

  /**
   * Removes the entry of {@code idempotencyKey}, if any, whoever holds it (no fence: for tools and
   * manual handling; resumers use {@link #complete}).
   *
   * @param idempotencyKey the intent's key
   */
  void remove(String idempotencyKey);

  /** {@return how many entries are parked, claimed or not} */
  int size();

  /**
   * Claims up to {@code max} entries due at {@code now}, oldest due first, each leased until
   * {@code now + lease}: no other claim returns them before then. Default: {@link #due} with no lease
   * (see the class comment).
   *
   * @param now the time, from the resumer's time source
   * @param max at most this many, at least 0
   * @param lease how long the claims hold, more than 0 and at most 24 h
   * @return the claims, a new list
   * @throws IllegalArgumentException when {@code max} or {@code lease} is out of range
   */
  default List<OutboxClaim> claim(Instant now, int max, Duration lease) {
    checkLease(lease);
    List<OutboxClaim> out = new ArrayList<>();
    for (OutboxEntry e : due(now, max)) {
      out.add(new OutboxClaim(e, OutboxClaim.UNLEASED, now.plus(lease)));
    }
    return out;
  }

  /**
   * Extends {@code claim}'s lease to {@code now + lease}, if it is still the current claim.
   * Default: {@code true}.
   *
   * @param claim the claim
   * @param now the time
   * @param lease the new lease, more than 0 and at most 24 h
   * @return whether the claim is still held (and now runs until {@code now + lease})
   */
  default boolean renew(OutboxClaim claim, Instant now, Duration lease) {
    checkLease(lease);
    return true;
  }

  /**
   * Removes the claimed entry, if {@code claim} is still its current claim.
   * Default: {@link #remove}, then {@code true}.
   *
   * @param claim the claim
   * @return whether it was removed by this call ({@code false}: another claim holds it, or it is gone)
   */
  default boolean complete(OutboxClaim claim) {
    remove(claim.idempotencyKey());
    return true;
  }

  /**
   * Replaces the claimed entry with {@code next} (same key; usually one more try, due later) and ends
   * the lease, if {@code claim} is still its current claim. Default: {@link #park}, then {@code true}.
   *
   * @param claim the claim
   * @param next the entry to keep, due at {@code next.dueAt()}
   * @return whether it was replaced ({@code false}: another claim holds it, or it is gone)
   * @throws IllegalArgumentException when {@code next} has another key
   */
  default boolean reschedule(OutboxClaim claim, OutboxEntry next) {
    if (!next.token().idempotencyKey().equals(claim.idempotencyKey())) {
      throw new IllegalArgumentException("next: key " + next.token().idempotencyKey()
          + " is not the claimed key " + claim.idempotencyKey());
    }
    park(next);
    return true;
  }

  /**
   * When the oldest entry was first parked, for an "oldest entry's age" gauge. Default: empty (not
   * known).
   *
   * @return the earliest {@link OutboxEntry#parkedAt()}, empty when the outbox is empty or cannot tell
   */
  default Optional<Instant> oldestParkedAt() {
    return Optional.empty();
  }

  /** {@return a new outbox in memory, lost with the process; leases and fences as documented above} */
  static Outbox inMemory() {
    return new InMemoryOutbox();
  }

  /**
   * Checks a lease: more than 0 and at most 24 h.
   *
   * @param lease the lease
   * @throws IllegalArgumentException naming the value when out of range
   */
  static void checkLease(Duration lease) {
    Ranges.check("lease", lease, Duration.ofNanos(1));
  }
}
