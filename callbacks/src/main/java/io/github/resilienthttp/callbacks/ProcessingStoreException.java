package io.github.resilienthttp.callbacks;

/**
 * The processing store could not read or write a record (the database is down, a lock wait timed
 * out, …). Nothing can be said about the record; a receiver answers 503 so that the sender retries.
 */
public class ProcessingStoreException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  /**
   * Creates the exception.
   *
   * @param message what failed, with scope and event ID
   * @param cause the underlying failure, e.g. a {@link java.sql.SQLException}
   */
  public ProcessingStoreException(String message, Throwable cause) {
    super(message, cause);
  }
}
