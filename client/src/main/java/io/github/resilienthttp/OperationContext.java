package io.github.resilienthttp;


/**
 * The state of one running operation, carried from {@link Operation#execute()} to the interceptors
 * as a request tag. Not API. Thread-safe: counters are read by the caller while interceptors write.
 */
final class OperationContext {
  final ResilientHttpClient client;
  /** Null until needed when the key is not sent: most GETs never need one. */
  private volatile String key;
  final boolean keySent;
  final boolean idempotent;
  final long startNanos;
  final long deadlineNanos;
  final long deadlineDurationNanos;
  /** Real start time: OkHttp's call timeout (the deadline's backstop) runs on real time. */
  private final long realStartNanos = System.nanoTime();
  private final String method;
  private final String host;
  private volatile OperationInfo info;
  /** Written and read only by the thread running the retry loop. */
  String lastReason;
  boolean lastSuccess;
  boolean lastRetryable;
  /** True for plain OkHttp calls that opted out with {@link OperationOptions#passThrough()}. */
  final boolean passThrough;
  private volatile boolean canceled;
  private volatile boolean ended;
  /**
   * The attempt in flight: attempts of one operation never overlap, so the network layer finds the
   * attempt's state here instead of in a per-attempt copy of the request.
   */
  volatile AttemptState currentAttempt;
  // Written by one thread at a time (attempts of an operation never overlap), read by any.
  private volatile int attempts;
  private volatile int networkRequests;

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
    this.method = method;
    this.host = host;
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

  /** Marks the operation as ended: from now on, cancelling it changes nothing. */
  void end() {
    ended = true;
  }

  boolean isEnded() {
    return ended;
  }

  @SuppressWarnings("NonAtomicOperationOnVolatileField") // single writer, see above
  int startAttempt() {
    return ++attempts;
  }

  int attempts() {
    return attempts;
  }

  @SuppressWarnings("NonAtomicOperationOnVolatileField") // single writer, see above
  void networkRequestStarted() {
    networkRequests++;
  }

  int networkRequests() {
    return networkRequests;
  }

  /** The operation's key: the given one, or a new random one made on first use. */
  String key() {
    String k = key;
    if (k == null) {
      synchronized (this) {
        k = key;
        if (k == null) {
          k = IdempotencyKeyPolicy.newKey();
          key = k;
        }
      }
    }
    return k;
  }

  /** What listeners and logs see of the operation; made on first use. */
  OperationInfo info() {
    OperationInfo i = info;
    if (i == null) {
      i = new OperationInfo(key(), keySent, idempotent, method, host);
      info = i; // a benign race: equal values
    }
    return i;
  }
}
