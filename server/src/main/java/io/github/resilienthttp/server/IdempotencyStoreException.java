package io.github.resilienthttp.server;

/** An idempotency store could not read or write its records. */
public class IdempotencyStoreException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  /**
   * Creates the exception.
   *
   * @param message what failed
   * @param cause the underlying failure, may be {@code null}
   */
  public IdempotencyStoreException(String message, Throwable cause) {
    super(message, cause);
  }
}
