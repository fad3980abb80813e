package io.github.resilienthttp.server;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.Map;
import java.util.Objects;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Idempotency records in this JVM's memory: for one instance, tests and development. Records are lost
 * on restart, so a retry after a restart runs the handler again; use {@link JdbcIdempotencyStore} when
 * a second effect matters. Each claim is one atomic map update, so concurrent duplicates cannot both
 * acquire. Thread-safe.
 */
public final class InMemoryIdempotencyStore implements IdempotencyStore {
  private record Entry(String fingerprint, String token, Instant leaseExpiresAt, int attempts,
      IdempotentResponse response, Instant completedAt) {}

  private record Id(String scope, String key) {}

  private final Map<Id, Entry> records = new ConcurrentHashMap<>();
  private final InstantSource clock;

  /** A store on the system clock. */
  public InMemoryIdempotencyStore() {
    this(Clock.systemUTC());
  }

  /**
   * A store on the given clock (leases and completion times are read from it).
   *
   * @param clock the clock
   */
  public InMemoryIdempotencyStore(InstantSource clock) {
    this.clock = Objects.requireNonNull(clock, "clock");
  }

  @Override
  public KeyClaim claim(String scope, String key, String fingerprint, Duration lease,
      Instant reclaimCompletedBefore) {
    IdempotencyStore.checkClaim(scope, key, fingerprint, lease);
    Objects.requireNonNull(reclaimCompletedBefore, "reclaimCompletedBefore");
    KeyClaim[] result = new KeyClaim[1];
    records.compute(new Id(scope, key), (id, e) -> {
      Instant now = clock.instant();
      String token = UUID.randomUUID().toString();
      Instant expires = now.plus(lease);
      if (e == null || (e.response != null && !e.completedAt.isAfter(reclaimCompletedBefore))) {
        result[0] = new KeyClaim.Acquired(scope, key, fingerprint, token, expires, 1, false);
        return new Entry(fingerprint, token, expires, 1, null, null);
      }
      if (!e.fingerprint.equals(fingerprint)) {
        result[0] = new KeyClaim.Mismatch(scope, key);
        return e;
      }
      if (e.response != null) {
        result[0] = new KeyClaim.Completed(scope, key, e.response, e.completedAt);
        return e;
      }
      if (e.leaseExpiresAt.isAfter(now)) {
        result[0] = new KeyClaim.InProgress(scope, key, e.leaseExpiresAt);
        return e;
      }
      boolean crashed = e.token != null;
      result[0] = new KeyClaim.Acquired(scope, key, fingerprint, token, expires, e.attempts + 1, crashed);
      return new Entry(fingerprint, token, expires, e.attempts + 1, null, null);
    });
    return result[0];
  }

  @Override
  public void complete(KeyClaim.Acquired claim, IdempotentResponse response) {
    Objects.requireNonNull(response, "response");
    boolean[] done = {false};
    records.computeIfPresent(new Id(claim.scope(), claim.key()), (id, e) -> {
      if (e.response != null || !claim.token().equals(e.token)) return e;
      done[0] = true;
      return new Entry(e.fingerprint, null, null, e.attempts, response, clock.instant());
    });
    if (!done[0]) throw new LeaseLostException(claim.scope(), claim.key());
  }

  @Override
  public void release(KeyClaim.Acquired claim) {
    records.computeIfPresent(new Id(claim.scope(), claim.key()), (id, e) ->
        e.response == null && claim.token().equals(e.token)
            ? new Entry(e.fingerprint, null, Instant.MIN, e.attempts, null, null) : e);
  }

  @Override
  public int purgeCompletedBefore(Instant completedAtOrBefore) {
    int[] n = {0};
    records.entrySet().removeIf(en -> {
      Entry e = en.getValue();
      boolean old = e.response != null && !e.completedAt.isAfter(completedAtOrBefore);
      if (old) n[0]++;
      return old;
    });
    return n[0];
  }

  /** {@return how many records are held, in progress or completed} */
  public int size() {
    return records.size();
  }

  @Override
  public String toString() {
    return "InMemoryIdempotencyStore{records=" + records.size() + "}";
  }
}
