package io.github.resilienthttp.callbacks;

import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.Objects;

/**
 * Runs a piece of work at most once to completion per (scope, ID), on a {@link ProcessingStore}:
 * claim, run, complete, or release on failure. Serves webhooks (through {@link CallbackReceiver}) and
 * queue consumers alike: with a message ID, a message redelivered after the work committed but before
 * the broker got the acknowledgement comes back as {@link ProcessingOutcome.Duplicate}; acknowledge it.
 *
 * <p>{@link #process} completes on the store after the work returns: the effect and the record are
 * two steps, so a crash between them repeats the work after the lease expires (fine for work that is
 * itself idempotent, or in-memory tests). {@link #processInTransaction} runs the work and the
 * completion in one database transaction on a {@link JdbcProcessingStore}: a crash anywhere rolls back
 * both, and the effect happens exactly once.
 *
 * <table>
 * <caption>Settings</caption>
 * <tr><th>setting</th><th>default</th><th>range</th></tr>
 * <tr><td>{@link Builder#store(ProcessingStore) store}</td><td>required</td><td>any</td></tr>
 * <tr><td>{@link Builder#lease(Duration) lease}: how long a claim is exclusive; longer than the work
 *     takes</td><td>60 s</td><td>1 s..24 h</td></tr>
 * </table>
 *
 * <p>Immutable and thread-safe. Store failures during the claim propagate as
 * {@link ProcessingStoreException} (nothing ran: leave the message unacknowledged). A call holds at
 * most one connection of the data source at a time.
 */
public final class Deduplicator {
  private final ProcessingStore store;
  private final Duration lease;

  /** Work whose result is stored with the record. */
  @FunctionalInterface
  public interface Work {
    /**
     * Does the work once.
     *
     * @param claim the caller's claim ({@link Claim.Acquired#attempt()} tells a retry)
     * @return the result to store (up to 4000 characters on JDBC), may be {@code null}
     * @throws Exception any failure; the record is released
     */
    String run(Claim.Acquired claim) throws Exception;
  }

  /** Work that writes on the transaction the completion commits with. */
  @FunctionalInterface
  public interface TransactionalWork {
    /**
     * Does the work on {@code transaction}; must not commit, roll back or close it.
     *
     * @param transaction a connection with auto-commit off
     * @param claim the caller's claim
     * @return the result to store, may be {@code null}
     * @throws Exception any failure; the transaction is rolled back and the record released
     */
    String run(Connection transaction, Claim.Acquired claim) throws Exception;
  }

  private Deduplicator(Builder b) {
    this.store = b.store;
    this.lease = b.lease;
  }

  /** {@return a builder with the defaults above} */
  public static Builder builder() {
    return new Builder();
  }

  /**
   * Claims, runs {@code work} when acquired, then completes (or releases when it threw).
   *
   * @param scope what the ID is unique within
   * @param id the event or message ID
   * @param work the work
   * @return the outcome
   * @throws ProcessingStoreException when the claim fails
   */
  public ProcessingOutcome process(String scope, String id, Work work) {
    Objects.requireNonNull(work, "work");
    Claim claim = store.claim(scope, id, lease);
    if (!(claim instanceof Claim.Acquired acquired)) return notAcquired(claim);
    String result;
    try {
      result = work.run(acquired);
    } catch (Exception e) {
      releaseQuietly(acquired, e);
      return new ProcessingOutcome.Failed(e);
    }
    try {
      store.complete(acquired, result);
    } catch (LeaseLostException e) {
      return new ProcessingOutcome.Failed(e);
    } catch (RuntimeException e) {
      releaseQuietly(acquired, e);
      return new ProcessingOutcome.Failed(e);
    }
    return new ProcessingOutcome.Processed(result, acquired.attempt());
  }

  /**
   * Claims, then runs {@code work} and the completion in one transaction on a connection of the
   * {@link JdbcProcessingStore}'s data source, and commits. On any failure the transaction is rolled
   * back and the record released (unless the lease was lost, when it is not ours to release).
   *
   * @param scope what the ID is unique within
   * @param id the event or message ID
   * @param work the work; its writes commit with the completion
   * @return the outcome
   * @throws IllegalStateException when the store is not a {@link JdbcProcessingStore}
   * @throws ProcessingStoreException when the claim fails, or no connection can be had
   */
  public ProcessingOutcome processInTransaction(String scope, String id, TransactionalWork work) {
    Objects.requireNonNull(work, "work");
    if (!(store instanceof JdbcProcessingStore jdbc)) {
      throw new IllegalStateException("processInTransaction needs a JdbcProcessingStore, not " + store);
    }
    Claim claim = store.claim(scope, id, lease);
    if (!(claim instanceof Claim.Acquired acquired)) return notAcquired(claim);
    Connection c;
    try {
      c = jdbc.dataSource().getConnection();
    } catch (SQLException e) {
      releaseQuietly(acquired, e);
      throw new ProcessingStoreException("no connection for (" + scope + ", " + id + ")", e);
    }
    Exception failure;
    try {
      c.setAutoCommit(false);
      String result = work.run(c, acquired);
      jdbc.complete(c, acquired, result);
      c.commit();
      return new ProcessingOutcome.Processed(result, acquired.attempt());
    } catch (Exception e) {
      rollbackQuietly(c, e);
      failure = e;
    } finally {
      closeQuietly(c); // before the release below: one pooled connection at a time per delivery
    }
    if (!(failure instanceof LeaseLostException)) releaseQuietly(acquired, failure);
    return new ProcessingOutcome.Failed(failure);
  }

  /** {@return the store} */
  public ProcessingStore store() {
    return store;
  }

  /** {@return the lease of each claim} */
  public Duration lease() {
    return lease;
  }

  private static ProcessingOutcome notAcquired(Claim claim) {
    if (claim instanceof Claim.Done done) {
      return new ProcessingOutcome.Duplicate(done.result(), done.completedAt());
    }
    return new ProcessingOutcome.Busy(((Claim.InProgress) claim).leaseExpiresAt());
  }

  private void releaseQuietly(Claim.Acquired claim, Exception cause) {
    try {
      store.release(claim);
    } catch (RuntimeException e) {
      cause.addSuppressed(e); // the lease expires on its own
    }
  }

  private static void rollbackQuietly(Connection c, Exception cause) {
    try {
      c.rollback();
    } catch (SQLException e) {
      cause.addSuppressed(e);
    }
  }

  private static void closeQuietly(Connection c) {
    // No setAutoCommit(true) here: after a failed rollback it would commit the half-done work.
    // Pools reset auto-commit when a connection comes back; a plain connection is discarded.
    try {
      c.close();
    } catch (SQLException ignored) {
      // nothing left to undo: committed or rolled back above
    }
  }

  @Override
  public String toString() {
    return "Deduplicator{store=" + store + ", lease=" + lease + "}";
  }

  /** Builds a {@link Deduplicator}; validates in {@link #build()}. Not thread-safe. */
  public static final class Builder {
    private ProcessingStore store;
    private Duration lease = Duration.ofSeconds(60);

    private Builder() {}

    /**
     * Required.
     *
     * @param store where the records live
     * @return this builder
     */
    public Builder store(ProcessingStore store) {
      this.store = Objects.requireNonNull(store, "store");
      return this;
    }

    /**
     * How long a claim is exclusive: 1 s to 24 h. Default 60 s. Longer than the work takes, or a second
     * consumer starts while the first is still working (its completion then fails with
     * {@link LeaseLostException} and, in a transaction, rolls back).
     *
     * @param lease the lease
     * @return this builder
     */
    public Builder lease(Duration lease) {
      this.lease = Objects.requireNonNull(lease, "lease");
      return this;
    }

    /**
     * Builds it.
     *
     * @return the deduplicator
     * @throws IllegalStateException when no store was set
     * @throws IllegalArgumentException naming the field and value when the lease is out of range
     */
    public Deduplicator build() {
      if (store == null) throw new IllegalStateException("store: required");
      if (lease.compareTo(Duration.ofSeconds(1)) < 0 || lease.compareTo(Duration.ofHours(24)) > 0) {
        throw new IllegalArgumentException("lease: " + lease + " is outside 1 s..24 h");
      }
      return new Deduplicator(this);
    }
  }
}
