package io.github.resilienthttp;

/**
 * What a listener may know about a running operation. Immutable and thread-safe.
 *
 * <p>{@link #idempotencyKey()} is the whole key: listeners are code, and may need it to correlate or
 * resume. Log {@link #shortKey()} instead: keys are not credentials, but they are not for logs either.
 */
public final class OperationInfo {
  private final String idempotencyKey;
  private final boolean idempotencyKeySent;
  private final boolean idempotent;
  private final String method;
  private final String host;

  /**
   * Describes an operation; made by the SDK, and usable to test a listener.
   *
   * @param idempotencyKey the operation's key
   * @param idempotencyKeySent whether the key is sent
   * @param idempotent whether the operation may be repeated safely
   * @param method the request's method
   * @param host the request's host
   */
  public OperationInfo(String idempotencyKey, boolean idempotencyKeySent, boolean idempotent,
      String method, String host) {
    this.idempotencyKey = idempotencyKey;
    this.idempotencyKeySent = idempotencyKeySent;
    this.idempotent = idempotent;
    this.method = method;
    this.host = host;
  }

  /**
   * The operation's whole idempotency key.
   *
   * @return the operation's whole idempotency key
   */
  public String idempotencyKey() {
    return idempotencyKey;
  }

  /**
   * The key's first 8 characters, for logs.
   *
   * @return the key's first 8 characters, for logs
   */
  public String shortKey() {
    return IdempotencyKeyPolicy.shorten(idempotencyKey);
  }

  /**
   * Whether the key is sent with the operation's requests.
   *
   * @return whether the key is sent with the operation's requests
   */
  public boolean idempotencyKeySent() {
    return idempotencyKeySent;
  }

  /**
   * Whether repeating the operation is safe (idempotent method or key sent).
   *
   * @return whether repeating the operation is safe (idempotent method or key sent)
   */
  public boolean idempotent() {
    return idempotent;
  }

  /**
   * The HTTP method.
   *
   * @return the HTTP method
   */
  public String method() {
    return method;
  }

  /**
   * The target host (no path, query or credentials).
   *
   * @return the target host (no path, query or credentials)
   */
  public String host() {
    return host;
  }

  @Override
  public String toString() {
    return method + " " + host + " key=" + shortKey() + "…";
  }
}
