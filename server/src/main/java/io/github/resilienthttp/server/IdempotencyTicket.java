package io.github.resilienthttp.server;

import java.sql.Connection;
import java.util.Objects;

/**
 * A request's hold on its key, from {@link Admission.Proceed}: complete it with the handler's response
 * (recorded for retries), or abandon it when nothing took effect. Not thread-safe; one request's.
 */
public final class IdempotencyTicket {
  private final IdempotencyGuard guard;
  private final KeyClaim.Acquired claim;
  private final IdempotentRequest request;

  IdempotencyTicket(IdempotencyGuard guard, KeyClaim.Acquired claim, IdempotentRequest request) {
    this.guard = guard;
    this.claim = claim;
    this.request = request;
  }

  /** {@return the claim on the key (its attempt number says whether a crashed holder came before)} */
  public KeyClaim.Acquired claim() {
    return claim;
  }

  /** {@return the request} */
  public IdempotentRequest request() {
    return request;
  }

  /**
   * Records the handler's response, on the store's own connection, and returns what to send. A status
   * the guard does not record ({@link IdempotencyGuard.Builder#recordStatus}) releases the key instead.
   *
   * @param response the handler's response
   * @return the response to send: the handler's, or a {@code 409} when the lease was lost meanwhile
   * @throws IdempotencyStoreException when the store fails
   */
  public IdempotentResponse complete(IdempotentResponse response) {
    return guard.complete(this, null, Objects.requireNonNull(response, "response"));
  }

  /**
   * Records the handler's response on the caller's connection, in its transaction (JDBC store only);
   * commit afterwards. On a lost lease this throws, and the caller must roll back.
   *
   * @param connection the connection holding the business write, auto-commit off
   * @param response the handler's response
   * @throws LeaseLostException when the lease was taken over: roll back
   * @throws IllegalStateException when the guard's store is not a {@link JdbcIdempotencyStore}
   */
  public void complete(Connection connection, IdempotentResponse response) {
    guard.completeInTransaction(this, Objects.requireNonNull(connection, "connection"),
        Objects.requireNonNull(response, "response"));
  }

  /** Releases the key after a failure that took no effect, so a retry runs the handler at once. */
  public void abandon() {
    guard.abandon(this);
  }
}
