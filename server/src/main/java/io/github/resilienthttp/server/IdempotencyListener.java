package io.github.resilienthttp.server;

/**
 * What the guard did with keyed requests, for metrics and logs. Every method has an empty default;
 * implement those you need. Called on the request's thread; keep it fast. A listener that throws is
 * ignored (the request goes on).
 */
public interface IdempotencyListener {
  /** Does nothing. */
  IdempotencyListener NONE = new IdempotencyListener() {};

  /**
   * The request acquired its key and its handler runs.
   *
   * @param key the key
   * @param attempt 1 for the key's first claim, more after a release or a crash
   */
  default void claimed(String key, int attempt) {}

  /**
   * The request took over a lease whose holder never completed (it crashed or hung past the lease).
   *
   * @param key the key
   * @param attempt this claim's attempt number
   */
  default void claimExpired(String key, int attempt) {}

  /**
   * A retry got the recorded response.
   *
   * @param key the key
   * @param status the recorded status
   */
  default void replayed(String key, int status) {}

  /**
   * A concurrent duplicate got {@code 409}: another request holds the key.
   *
   * @param key the key
   */
  default void inProgress(String key) {}

  /**
   * The key was reused with another fingerprint and refused with {@code 422}.
   *
   * @param key the key
   */
  default void mismatch(String key) {}

  /**
   * A key past retention was refused ({@link AfterRetention#refuse()}).
   *
   * @param key the key
   */
  default void expiredKeyRefused(String key) {}

  /**
   * The handler finished but its lease had been taken over; its work was rolled back (transactional)
   * or may have taken effect twice (not transactional).
   *
   * @param key the key
   */
  default void leaseLost(String key) {}

  /**
   * The request was refused with {@code 400}: the key was missing where required, or malformed.
   *
   * @param reason why
   */
  default void rejected(String reason) {}
}
