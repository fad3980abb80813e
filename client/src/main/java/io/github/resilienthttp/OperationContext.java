package io.github.resilienthttp;

import java.util.concurrent.atomic.AtomicInteger;

/**
 * The state of one running operation, carried from {@link Operation#execute()} to the interceptors
 * as a request tag. Not API. Thread-safe: counters are read by the caller while interceptors write.
 */
final class OperationContext {
  final ResilientHttpClient client;
  final String key;
  final boolean keySent;
  final boolean idempotent;
  final long startNanos;
  final long deadlineNanos;
  final long deadlineDurationNanos;
  /** Real start time: OkHttp's call timeout (the deadline's backstop) runs on real time. */
  private final long realStartNanos = System.nanoTime();
  final OperationInfo info;
  /** Written and read only by the thread running the retry loop. */
  String lastReason;
  boolean lastSuccess;
  boolean lastRetryable;
  /** True for plain OkHttp calls that opted out with {@link OperationOptions#passThrough()}. */
  final boolean passThrough;
  private volatile boolean canceled;
  private final AtomicInteger attempts = new AtomicInteger();
  private final AtomicInteger networkRequests = new AtomicInteger();

  OperationContext(
      ResilientHttpClient client, String key, boolean keySent, boolean idempotent,
      String method, String host, long startNanos, long deadlineDurationNanos,
      boolean passThrough) {
    this.passThrough = passThrough;
    this.client = client;
    this.key = key;
    this.keySent = keySent;
    this.idempotent = idempotent;
    this.startNanos = startNanos;
    this.deadlineDurationNanos = deadlineDurationNanos;
    this.deadlineNanos = startNanos + deadlineDurationNanos;
    this.info = new OperationInfo(key, keySent, idempotent, method, host);
  }

  long remainingNanos() {
    return deadlineNanos - client.timeSource().nanoTime();
  }

  long elapsedNanos() {
    return client.timeSource().nanoTime() - startNanos;
  }

  /** True once the deadline has passed in real time, i.e. OkHttp's call timeout may have fired. */
  boolean realDeadlinePassed() {
    return System.nanoTime() - realStartNanos >= deadlineDurationNanos;
  }

  void cancel() {
    canceled = true;
  }

  boolean isCanceled() {
    return canceled;
  }

  int startAttempt() {
    return attempts.incrementAndGet();
  }

  int attempts() {
    return attempts.get();
  }

  void networkRequestStarted() {
    networkRequests.incrementAndGet();
  }

  int networkRequests() {
    return networkRequests.get();
  }
}
