package io.github.resilienthttp;

/**
 * Why an attempt was sent, so that operators can tell load that a caller asked for from load that
 * the SDK added: listeners ({@link OperationListener#attemptStarted(OperationInfo, int, AttemptKind)}),
 * logs and metrics carry it.
 */
public enum AttemptKind {
  /** The operation's first attempt. */
  FIRST,
  /** A retry, after an earlier attempt failed in a retryable way and its backoff passed. */
  RETRY,
  /**
   * A hedge: another copy of an idempotent request sent while an earlier attempt is still in
   * flight, because it has not answered within the hedging delay (gRPC proposal A6).
   */
  HEDGE,
  /**
   * The first attempt of a poll of an asynchronous operation's status resource, or of the fetch of
   * its final result ({@link Operation#awaitCompletion(AsyncOperationPolicy)}): load of the wait,
   * not a retry. A poll that fails transiently is retried; those attempts are {@link #RETRY}.
   */
  POLL,
  /**
   * The first attempt of an outcome query: a GET asking whether an operation whose outcome was
   * unknown took effect.
   */
  QUERY
}
