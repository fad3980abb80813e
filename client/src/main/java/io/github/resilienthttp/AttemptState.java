package io.github.resilienthttp;

/**
 * Per-attempt facts that only the network layer can see, found by the network layer as the
 * operation's {@link OperationContext#currentAttempt}.
 * Written by {@link NetworkAttemptTracker} on OkHttp's thread for the call, read by
 * {@link RetryInterceptor} on the same call after {@code proceed} returns. Not API.
 */
final class AttemptState {
  final OperationContext operation;
  /** The time left before the deadline when the attempt started: caps its timeouts. */
  final long remainingNanos;
  volatile int networkRequests;

  AttemptState(OperationContext operation, long remainingNanos) {
    this.operation = operation;
    this.remainingNanos = remainingNanos;
  }

  /** True once any network request of this attempt was about to be written. */
  boolean mayHaveReachedServer() {
    return networkRequests > 0;
  }
}
