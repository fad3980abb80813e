package io.github.resilienthttp.callbacks;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.Objects;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Processing records in this process's memory: for a single receiver instance and for tests. Records
 * are lost on restart, and two processes do not see each other's records; use
 * {@link JdbcProcessingStore} for a fleet.
 *
 * <table>
 * <caption>Settings</caption>
 * <tr><th>setting</th><th>default</th><th>range</th></tr>
 * <tr><td>{@link Builder#maxRecords(int) maxRecords}</td><td>100,000</td><td>1..10,000,000</td></tr>
 * <tr><td>{@link Builder#retention(Duration) retention} of done records</td><td>7 days</td>
 *     <td>1 s..3650 days</td></tr>
 * <tr><td>{@link Builder#clock(InstantSource) clock}</td><td>{@link Clock#systemUTC()}</td>
 *     <td>any</td></tr>
 * </table>
 *
 * <p>Bounded: when {@code maxRecords} records are held, a claim for a new ID first drops done records
 * past retention; when none can be dropped it throws {@link ProcessingStoreException} (a receiver
 * answers 503) rather than forget a record early and let a duplicate through.
 *
 * <p>Thread-safe; each record changes atomically ({@link ConcurrentHashMap#compute}).
 */
public final class InMemoryProcessingStore implements ProcessingStore {
  private enum State { IN_PROGRESS, DONE }

  private record Entry(State state, String token, Instant leaseExpiresAt, int attempt, String result,
      Instant completedAt) {}

  private final ConcurrentHashMap<RecordKey, Entry> records = new ConcurrentHashMap<>();
  private final int maxRecords;
  private final Duration retention;
  private final InstantSource clock;

  private InMemoryProcessingStore(Builder b) {
    this.maxRecords = b.maxRecords;
    this.retention = b.retention;
    this.clock = b.clock;
  }

  /** {@return a builder with the defaults above} */
  public static Builder builder() {
    return new Builder();
  }

  @Override
  public Claim claim(String scope, String eventId, Duration lease) {
    RecordKey key = new RecordKey(scope, eventId);
    RecordKey.checkLease(lease);
    Instant now = clock.instant();
    if (!records.containsKey(key) && records.size() >= maxRecords) {
      purgeExpired();
      if (records.size() >= maxRecords) {
        throw new ProcessingStoreException("in-memory store full: " + maxRecords
            + " records, none past retention " + retention + "; refusing (" + scope + ", " + eventId
            + ") rather than forgetting a record early", null);
      }
    }
    AtomicReference<Claim> out = new AtomicReference<>();
    records.compute(key, (k, e) -> {
      if (e == null || expired(e, now)) {
        Entry fresh = new Entry(State.IN_PROGRESS, newToken(), now.plus(lease), 1, null, null);
        out.set(acquired(k, fresh));
        return fresh;
      }
      if (e.state == State.DONE) {
        out.set(new Claim.Done(scope, eventId, e.result, e.completedAt));
        return e;
      }
      if (e.leaseExpiresAt.isAfter(now)) {
        out.set(new Claim.InProgress(scope, eventId, e.leaseExpiresAt));
        return e;
      }
      Entry takeover = new Entry(State.IN_PROGRESS, newToken(), now.plus(lease), e.attempt + 1, null, null);
      out.set(acquired(k, takeover));
      return takeover;
    });
    return out.get();
  }

  @Override
  public void complete(Claim.Acquired claim, String result) {
    Objects.requireNonNull(claim, "claim");
    Instant now = clock.instant();
    boolean[] done = {false};
    records.computeIfPresent(new RecordKey(claim.scope(), claim.eventId()), (k, e) -> {
      if (e.state != State.IN_PROGRESS || !e.token.equals(claim.token())) return e;
      done[0] = true;
      return new Entry(State.DONE, null, null, e.attempt, result, now);
    });
    if (!done[0]) throw new LeaseLostException(claim.scope(), claim.eventId());
  }

  @Override
  public void release(Claim.Acquired claim) {
    Objects.requireNonNull(claim, "claim");
    records.computeIfPresent(new RecordKey(claim.scope(), claim.eventId()), (k, e) ->
        e.state == State.IN_PROGRESS && e.token.equals(claim.token())
            // Keep the attempt count; an expired lease lets the next claim in at once.
            ? new Entry(State.IN_PROGRESS, e.token + "-released", Instant.MIN, e.attempt, null, null)
            : e);
  }

  @Override
  public Duration retention() {
    return retention;
  }

  /**
   * Drops done records completed more than {@link #retention()} ago.
   *
   * @return how many were dropped
   */
  public int purgeExpired() {
    Instant now = clock.instant();
    int before = records.size();
    records.values().removeIf(e -> expired(e, now));
    return Math.max(0, before - records.size());
  }

  /** {@return how many records are held, in progress and done} */
  public int size() {
    return records.size();
  }

  private boolean expired(Entry e, Instant now) {
    return e.state == State.DONE && !e.completedAt.plus(retention).isAfter(now);
  }

  private static Claim.Acquired acquired(RecordKey k, Entry e) {
    return new Claim.Acquired(k.scope(), k.eventId(), e.token, e.leaseExpiresAt, e.attempt);
  }

  private static String newToken() {
    return UUID.randomUUID().toString();
  }

  @Override
  public String toString() {
    return "InMemoryProcessingStore{records=" + records.size() + ", maxRecords=" + maxRecords
        + ", retention=" + retention + "}";
  }

  /** Builds an {@link InMemoryProcessingStore}; validates in {@link #build()}. Not thread-safe. */
  public static final class Builder {
    private int maxRecords = 100_000;
    private Duration retention = Duration.ofDays(7);
    private InstantSource clock = Clock.systemUTC();

    private Builder() {}

    /**
     * The most records held at once: 1 to 10,000,000. Default 100,000.
     *
     * @param maxRecords the bound
     * @return this builder
     */
    public Builder maxRecords(int maxRecords) {
      this.maxRecords = maxRecords;
      return this;
    }

    /**
     * How long done records are kept: 1 s to 3650 days. Default 7 days.
     *
     * @param retention the retention
     * @return this builder
     */
    public Builder retention(Duration retention) {
      this.retention = Objects.requireNonNull(retention, "retention");
      return this;
    }

    /**
     * Leases and retention are measured on this clock. Default {@link Clock#systemUTC()}.
     *
     * @param clock the clock
     * @return this builder
     */
    public Builder clock(InstantSource clock) {
      this.clock = Objects.requireNonNull(clock, "clock");
      return this;
    }

    /**
     * Builds the store.
     *
     * @return the store
     * @throws IllegalArgumentException naming the field and value when a setting is out of range
     */
    public InMemoryProcessingStore build() {
      if (maxRecords < 1 || maxRecords > 10_000_000) {
        throw new IllegalArgumentException("maxRecords: " + maxRecords + " is outside 1..10000000");
      }
      JdbcProcessingStore.checkRetention(retention);
      return new InMemoryProcessingStore(this);
    }
  }
}
