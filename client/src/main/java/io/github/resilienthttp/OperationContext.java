package io.github.resilienthttp;

import java.util.concurrent.CompletableFuture;
import kotlin.jvm.JvmClassMappingKt;
import kotlin.jvm.functions.Function0;
import kotlin.reflect.KClass;
import okhttp3.Call;
import okhttp3.Request;

/**
 * The state of one running operation, carried as a call tag on each of its OkHttp calls (each
 * attempt's call for {@link Operation#execute()} and {@link Operation#executeAsync()}, the one call
 * of a plain call on {@link ResilientHttpClient#okHttpClient()}), where the SDK's interceptors, its
 * event listener and the {@link DeadlineWatchdog} find it. Not API. Thread-safe: counters are read
 * by the caller while interceptors write.
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
  /**
   * When the deadline's backstop ({@link DeadlineWatchdog}) fires, in {@link System#nanoTime()}:
   * the backstop runs on real time, whatever the client's {@link TimeSource}.
   */
  final long realDeadlineNanos;
  /** The call {@link DeadlineWatchdog} watches for this operation, if any. */
  volatile Call watchedCall;
  /**
   * Set when OkHttp reported {@link #watchedCall} ended ({@code callEnd} or {@code callFailed}).
   * That happens before the operation ends when the body was complete at once (an empty body), and
   * for an async operation's earlier attempts; {@link #callDone()} tells the two apart.
   */
  volatile boolean watchedCallEnded;
  /** Set when the operation ended without a response: no body will be read. */
  volatile boolean endedWithoutResponse;
  /** The next operation in {@link DeadlineWatchdog}'s list; only the watchdog reads it. */
  OperationContext watchNext;
  /**
   * Whether {@link DeadlineWatchdog} has this operation in its lists. Cleared (by the watchdog,
   * after unlinking it) when the operation is forgotten or its deadline passed.
   */
  volatile boolean inWatchdog;
  /**
   * The type of the call tag that carries an operation, made once: OkHttp 5 keys tags by Kotlin
   * class, and its {@code Call.tag(Class)} makes a new {@code KClass} on every lookup.
   */
  static final KClass<OperationContext> TAG =
      JvmClassMappingKt.getKotlinClass(OperationContext.class);

  /** The value of every call tag of this operation, made once rather than per call. */
  private final Function0<OperationContext> asTag = () -> this;
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
  private volatile CompletableFuture<Void> cancelSignal;
  /** The one OkHttp call of a plain call: cancelling it cancels the operation. */
  volatile Call plainCall;
  private volatile boolean ended;
  /*
   * The attempt in flight. Attempts of one operation never overlap, so the network layer finds the
   * attempt's state here, instead of in a per-attempt object or a copy of the request: written by
   * the retry loop when the attempt starts, then by NetworkAttemptTracker on OkHttp's thread for the
   * call, and read by the retry loop after the attempt.
   */
  /** The time left before the deadline when the current attempt started: caps its timeouts. */
  private volatile long attemptRemainingNanos;
  /** Requests of the current attempt about to be written to the network. */
  private volatile int attemptNetworkRequests;
  // Written by one thread at a time (attempts of an operation never overlap), read by any.
  private volatile int attempts;
  private volatile int networkRequests;

  OperationContext(
      ResilientHttpClient client, String key, boolean keySent, boolean idempotent,
      String method, String host, long startNanos, long realStartNanos, long deadlineDurationNanos,
      boolean passThrough) {
    this.passThrough = passThrough;
    this.client = client;
    this.key = key;
    this.keySent = keySent;
    this.idempotent = idempotent;
    this.startNanos = startNanos;
    this.deadlineDurationNanos = deadlineDurationNanos;
    this.deadlineNanos = startNanos + deadlineDurationNanos;
    this.realDeadlineNanos = realStartNanos + deadlineDurationNanos;
    this.method = method;
    this.host = host;
  }

  long remainingNanos() {
    return deadlineNanos - client.timeSource().nanoTime();
  }

  long elapsedNanos() {
    return client.timeSource().nanoTime() - startNanos;
  }

  /**
   * A new OkHttp call for one attempt of this operation: on the client that
   * {@link ResilientHttpClient#attemptClient} picks (which has no call timeout: the deadline replaces
   * it), tagged with this operation, and watched for the deadline.
   */
  Call newAttemptCall(Request attempt, long remainingNanos) {
    Call call = client.attemptClient(remainingNanos).newCall(attempt);
    call.tag(TAG, asTag);
    watchedCallEnded = false;
    watchedCall = call;
    // Checked after the call is set: a watchdog that dropped the operation (its deadline passed in
    // real time, while this attempt was being set up) either saw this call and stopped it, or is
    // told again here (watch() marks it watched), so no attempt ever runs unwatched.
    if (!inWatchdog) {
      client.deadlineWatchdog().watch(this);
    }
    return call;
  }

  /**
   * Watches the one OkHttp call of a plain call for the deadline; its attempts are the chain's
   * proceeds, so the call is the same for all of them.
   */
  void watchPlainCall(Call call) {
    plainCall = call;
    watchedCallEnded = false;
    watchedCall = call;
    if (call.isCanceled()) {
      cancel();
    }
    if (!inWatchdog) {
      client.deadlineWatchdog().watch(this);
    }
  }

  /**
   * Whether the deadline's backstop can forget this operation: it ended, and either had no response
   * or OkHttp reported its last call ended (the body was read or closed).
   */
  boolean callDone() {
    return endedWithoutResponse || (watchedCallEnded && ended);
  }

  /** This operation as the value of a call tag, for {@code call.tag(OperationContext.TAG, ..)}. */
  Function0<OperationContext> asTag() {
    return asTag;
  }

  /** True once the deadline has passed in real time, i.e. the backstop may have fired. */
  boolean realDeadlinePassed() {
    return System.nanoTime() - realDeadlineNanos >= 0;
  }

  void cancel() {
    canceled = true;
    CompletableFuture<Void> signal = cancelSignal;
    if (signal != null) {
      signal.complete(null);
    }
  }

  /**
   * Completes when the operation is cancelled: what a blocking wait (backoff, bulkhead) waits on
   * besides its own time, so that {@link #cancel()} wakes it at once. Made on first use, so an
   * operation that never waits allocates none.
   */
  CompletableFuture<Void> cancelSignal() {
    CompletableFuture<Void> signal = cancelSignal;
    if (signal == null) {
      synchronized (this) {
        signal = cancelSignal;
        if (signal == null) {
          signal = new CompletableFuture<>();
          cancelSignal = signal;
        }
      }
    }
    // Read after publishing the signal: a cancel() that saw no signal set the flag before.
    if (canceled) {
      signal.complete(null);
    }
    return signal;
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

  /**
   * Starts an attempt.
   *
   * @param remainingNanos the time left before the deadline
   * @return the attempt's number, from 1
   */
  @SuppressWarnings("NonAtomicOperationOnVolatileField") // single writer, see above
  int startAttempt(long remainingNanos) {
    attemptNetworkRequests = 0;
    attemptRemainingNanos = remainingNanos;
    return ++attempts;
  }

  /** The time left before the deadline when the current attempt started. */
  long attemptRemainingNanos() {
    return attemptRemainingNanos;
  }

  /** True once a network request of the current attempt was about to be written. */
  boolean attemptMayHaveReachedServer() {
    return attemptNetworkRequests > 0;
  }

  int attempts() {
    return attempts;
  }

  /** Counts a request of the current attempt about to be written (OkHttp's thread for the call). */
  @SuppressWarnings("NonAtomicOperationOnVolatileField") // single writer, see above
  void networkRequestStarted() {
    attemptNetworkRequests++;
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
          k = client.newKey();
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
