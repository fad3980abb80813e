package io.github.resilienthttp.outbox.jdbc;

/**
 * The outbox table could not be read or written (the database is down, a lock wait timed out, a row
 * holds no resume token, …). The message names the operation, the table and, where there is one, the
 * idempotency key; the cause is usually a {@link java.sql.SQLException}. Nothing can be said about the
 * entry: a {@code park} that throws may or may not have stored it.
 */
public class OutboxStoreException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  /**
   * Creates the exception.
   *
   * @param message what failed, on which table, with the key where there is one
   * @param cause the underlying failure, e.g. a {@link java.sql.SQLException}
   */
  public OutboxStoreException(String message, Throwable cause) {
    super(message, cause);
  }
}
