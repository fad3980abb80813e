package io.github.resilienthttp.spring;

import io.github.resilienthttp.callbacks.CallbackHandler;
import io.github.resilienthttp.callbacks.CallbackReceiver;
import io.github.resilienthttp.callbacks.CallbackResponse;
import io.github.resilienthttp.callbacks.CallbackVerifier;
import io.github.resilienthttp.callbacks.JdbcProcessingStore;
import io.github.resilienthttp.callbacks.VerifiedCallback;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.Function;
import javax.sql.DataSource;
import org.springframework.jdbc.datasource.DataSourceUtils;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.TransactionStatus;
import org.springframework.transaction.support.DefaultTransactionDefinition;

/**
 * Receives signed callbacks (webhooks) once, in the application's Spring transactions: the
 * delivery is verified, its event claimed in the {@link JdbcProcessingStore} (a short transaction
 * of its own, so that a concurrent delivery sees the claim), and then the application's
 * {@link CallbackHandler} runs inside a transaction of the application's
 * {@link PlatformTransactionManager}, in which the processing record is also marked done, on the
 * same connection ({@link JdbcProcessingStore#complete(java.sql.Connection,
 * io.github.resilienthttp.callbacks.Claim.Acquired, String)} on
 * {@link DataSourceUtils#getConnection(DataSource)}). Both commit together or not at all: the
 * handler's JdbcTemplate / JPA writes and {@code @Transactional} methods join that transaction
 * (propagation REQUIRED). The answers (status, headers, body) are those of
 * {@link CallbackReceiver}: 200 processed or duplicate, 401 forged, 400 malformed or stale, 409 busy,
 * 500 handler failed (rolled back, record released), 503 store unavailable.
 *
 * <p>The store's data source must be the one the transaction manager manages. If {@code receive}
 * is itself called inside a transaction, the handler joins it, and the record commits when that
 * outer transaction does.
 *
 * <p>Thread-safe; each delivery runs on the calling thread.
 */
public final class TransactionalCallbackReceiver {
  private final CallbackReceiver receiver;
  private final ClaimTrackingStore store;
  private final PlatformTransactionManager transactions;
  private final DataSource dataSource;

  /**
   * A receiver.
   *
   * @param verifier checks signatures and timestamps
   * @param store the processing records, on the transaction manager's data source
   * @param transactions the application's transaction manager
   * @param scope what event IDs are unique within, or null for the scheme's name
   * @param lease how long a delivery holds its event
   * @param eventId the event ID of a verified delivery, or null for the scheme's own
   */
  public TransactionalCallbackReceiver(CallbackVerifier verifier, JdbcProcessingStore store,
      PlatformTransactionManager transactions, String scope, Duration lease,
      Function<VerifiedCallback, String> eventId) {
    this.store = new ClaimTrackingStore(Objects.requireNonNull(store, "store"));
    this.transactions = Objects.requireNonNull(transactions, "transactions");
    this.dataSource = store.dataSource();
    CallbackReceiver.Builder b = CallbackReceiver.builder().verifier(verifier).store(this.store)
        .lease(Objects.requireNonNull(lease, "lease"));
    if (scope != null) b.scope(scope);
    if (eventId != null) b.eventId(eventId);
    this.receiver = b.build();
  }

  /**
   * Receives one delivery.
   *
   * @param headers the request headers, any case
   * @param body the raw request body bytes (before any parsing: the signature covers them)
   * @param handler the application's work; its result (up to 4000 characters, may be null) is stored
   *     and its writes commit with the record
   * @return the answer for the sender; never throws for a bad delivery or a failing handler
   */
  public CallbackResponse receive(Map<String, ? extends List<String>> headers, byte[] body,
      CallbackHandler handler) {
    Objects.requireNonNull(handler, "handler");
    return receiver.receive(headers, body, callback -> handleInTransaction(callback, handler));
  }

  private String handleInTransaction(VerifiedCallback callback, CallbackHandler handler) throws Exception {
    TransactionStatus tx = transactions.getTransaction(new DefaultTransactionDefinition());
    String result;
    try {
      result = handler.handle(callback);
      store.store().complete(DataSourceUtils.getConnection(dataSource), store.acquired(), result);
    } catch (Exception | Error e) {
      try {
        transactions.rollback(tx);
      } catch (RuntimeException rollbackFailure) {
        e.addSuppressed(rollbackFailure);
      }
      throw e;
    }
    transactions.commit(tx); // a commit failure propagates: the receiver releases the record (500)
    store.completedInTransaction();
    return result;
  }

  /** {@return the scope records are kept under} */
  public String scope() {
    return receiver.scope();
  }

  /** {@return the processing records' store} */
  public JdbcProcessingStore store() {
    return store.store();
  }

  @Override
  public String toString() {
    return "TransactionalCallbackReceiver{" + receiver + "}";
  }
}
