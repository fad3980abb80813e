package io.github.resilienthttp.callbacks;

import java.sql.Connection;

/**
 * The application's work for one verified event, written on the transaction that also records the
 * event as processed ({@link CallbackReceiver#receiveInTransaction}).
 */
@FunctionalInterface
public interface TransactionalCallbackHandler {
  /**
   * Handles the event on {@code transaction}; must not commit, roll back or close it.
   *
   * @param callback the verified delivery
   * @param transaction a connection of the {@link JdbcProcessingStore}'s data source, auto-commit off
   * @return a result to store with the record (up to 4000 characters), may be {@code null}
   * @throws Exception any failure: the transaction is rolled back, the record released, and the sender
   *     gets 500
   */
  String handle(VerifiedCallback callback, Connection transaction) throws Exception;
}
