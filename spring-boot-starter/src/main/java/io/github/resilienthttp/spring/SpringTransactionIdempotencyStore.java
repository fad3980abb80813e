package io.github.resilienthttp.spring;

import io.github.resilienthttp.server.IdempotencyStore;
import io.github.resilienthttp.server.IdempotentResponse;
import io.github.resilienthttp.server.JdbcIdempotencyStore;
import io.github.resilienthttp.server.KeyClaim;
import java.sql.Connection;
import java.time.Duration;
import java.time.Instant;
import java.util.Objects;
import javax.sql.DataSource;
import org.springframework.jdbc.datasource.DataSourceUtils;
import org.springframework.transaction.support.TransactionSynchronizationManager;

/**
 * A {@link JdbcIdempotencyStore} whose {@link #complete} joins the Spring transaction running on the
 * thread (the one {@link TransactionalIdempotencyFilter} opens, which the handler's JdbcTemplate or
 * JPA writes join too), so the record commits or rolls back with the business write. Claims and
 * releases stay on their own auto-commit connections: a claim must be visible to a concurrent
 * duplicate at once, not at the end of the first request's transaction. Without an active
 * transaction, {@code complete} records on its own connection. Thread-safe.
 */
public final class SpringTransactionIdempotencyStore implements IdempotencyStore {
  private final JdbcIdempotencyStore jdbc;
  private final DataSource dataSource;

  /**
   * Wraps a JDBC store.
   *
   * @param jdbc the store; its data source must be the one the transaction manager manages
   */
  public SpringTransactionIdempotencyStore(JdbcIdempotencyStore jdbc) {
    this.jdbc = Objects.requireNonNull(jdbc, "jdbc");
    this.dataSource = jdbc.dataSource();
  }

  /** {@return the wrapped JDBC store} */
  public JdbcIdempotencyStore jdbc() {
    return jdbc;
  }

  @Override
  public KeyClaim claim(String scope, String key, String fingerprint, Duration lease,
      Instant reclaimCompletedBefore) {
    return jdbc.claim(scope, key, fingerprint, lease, reclaimCompletedBefore);
  }

  /**
   * Records the response in the thread's Spring transaction when one is active (nothing is committed
   * here), else on its own connection.
   *
   * @param claim the claim
   * @param response the response to replay
   * @throws io.github.resilienthttp.server.LeaseLostException when the lease was taken over (roll back)
   */
  @Override
  public void complete(KeyClaim.Acquired claim, IdempotentResponse response) {
    if (!TransactionSynchronizationManager.isActualTransactionActive()) {
      jdbc.complete(claim, response);
      return;
    }
    Connection c = DataSourceUtils.getConnection(dataSource);
    try {
      jdbc.complete(c, claim, response);
    } finally {
      DataSourceUtils.releaseConnection(c, dataSource);
    }
  }

  @Override
  public void release(KeyClaim.Acquired claim) {
    jdbc.release(claim);
  }

  @Override
  public int purgeCompletedBefore(Instant completedAtOrBefore) {
    return jdbc.purgeCompletedBefore(completedAtOrBefore);
  }

  @Override
  public String toString() {
    return "SpringTransactionIdempotencyStore[" + jdbc + "]";
  }
}
